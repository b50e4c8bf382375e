"""Never a wrong answer to a real environment without consent (issue 16).

The real-looking environment is the session's sandbox behind a proxy that hides
``/sandbox/v1/*``, configured through ``AUTHZKIT_*`` with a subject token and
``AUTHZKIT_ANSWER_PIN``, as a partner team would configure the provider's service. The
sandbox's own counters (read from the object behind the proxy, not over HTTP) show how many
wrong answers arrived: none from ``demo``, ``trace`` or notebook 05 without consent, exactly
one with ``--allow-wrong-answers`` or ``AUTHZKIT_ALLOW_WRONG_ANSWERS=1``. The embedded
sandbox needs no consent: nobody can be locked out there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit import Settings, connect
from authzkit.cli import main
from authzkit.sandbox import Sandbox
from authzkit.shared.consent import (
    ALLOW_WRONG_ANSWERS_VAR,
    SKIP_MESSAGE,
    WrongAnswerPolicy,
    consent_from_env,
    wrong_answers_allowed,
)
from authzkit.shared.flows import ERROR_FLOWS, FlowRunner
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION

from support.broken_proxy import BrokenProxy
from support.kernels import execute_notebook
from support.leaks import shows

WRONG = "srn:error:bad_challenge_solution"
HARMLESS = [f"srn:error:{flow}" for flow in ERROR_FLOWS if f"srn:error:{flow}" != WRONG]
SECRETS = ("AUTHZKIT_CLIENT_SECRET", "AUTHZKIT_SUBJECT_TOKEN", "AUTHZKIT_ANSWER_PIN")
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_errors.ipynb"


def wrong_answers(sandbox: Sandbox) -> int:
    """``bad_challenge_solution`` answers the sandbox gave, from its own counters."""
    return sandbox.stats()["authorize"].get(WRONG, 0)


@pytest.fixture
def proxy(sandbox: Sandbox) -> Iterator[BrokenProxy]:
    with BrokenProxy(sandbox) as started:
        yield started


def real_environ(base_url: str, sandbox: Sandbox) -> dict[str, str]:
    """``AUTHZKIT_*`` of a real environment at ``base_url`` (alice's token, PIN, account)."""
    alice = sandbox.world.owned_by("alice")[0]
    assert sandbox.client_secret is not None, "the sandbox's client has no secret"
    return {
        "AUTHZKIT_BASE_URL": base_url,
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        "AUTHZKIT_SUBJECT_TOKEN": sandbox.session_token("alice"),
        "AUTHZKIT_RESOURCE_ID": alice.id,
        "AUTHZKIT_RESOURCE_TYPE": alice.type,
        "AUTHZKIT_ANSWER_PIN": sandbox.world.subject("alice").credentials["pin"],
        "AUTHZKIT_PLAIN_ACTION": DEFAULT_PLAIN_ACTION,
        "AUTHZKIT_CHALLENGE_ACTION": DEFAULT_CHALLENGE_ACTION,
    }


@pytest.fixture
def real(
    no_authzkit_env: None, monkeypatch: pytest.MonkeyPatch, proxy: BrokenProxy, sandbox: Sandbox
) -> dict[str, str]:
    """``AUTHZKIT_*`` point at the proxy (and nothing else: no consent, no ``.env``)."""
    environ = real_environ(proxy.base_url, sandbox)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return environ


# ----------------------------------------------------------------------------- the rule
def test_the_rule(real: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with connect() as connection:
        assert not connection.is_sandbox
        assert not wrong_answers_allowed(connection)
        assert WrongAnswerPolicy.for_connection(connection).skip_message() == SKIP_MESSAGE
        assert wrong_answers_allowed(connection, consent=True)
    # the variable is one of the settings, read with the others when the environment connects
    for value, allowed in (("1", True), ("yes", True), ("0", False), ("off", False)):
        monkeypatch.setenv(ALLOW_WRONG_ANSWERS_VAR, value)
        with connect() as connection:
            assert wrong_answers_allowed(connection) is allowed, value
    monkeypatch.setenv(ALLOW_WRONG_ANSWERS_VAR, "1")
    with connect() as connection:
        assert not wrong_answers_allowed(connection, consent=False)  # an explicit no wins
    monkeypatch.setenv(ALLOW_WRONG_ANSWERS_VAR, "sure")
    with pytest.raises(ConfigError, match=ALLOW_WRONG_ANSWERS_VAR):
        connect()
    with connect(Settings(), key_size=2048) as sandbox_env:  # started by authzkit
        assert wrong_answers_allowed(sandbox_env, consent=False)


def test_the_message_says_why_and_how_to_allow_it() -> None:
    assert SKIP_MESSAGE == (
        "skipped (real environment): a wrong answer may count against a person's PIN; "
        "pass --allow-wrong-answers or set AUTHZKIT_ALLOW_WRONG_ANSWERS=1"
    )


def test_consent_is_read_from_dotenv_too(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"{ALLOW_WRONG_ANSWERS_VAR}=true\n")
    assert consent_from_env({}, dotenv) is True
    assert (
        consent_from_env({ALLOW_WRONG_ANSWERS_VAR: "0"}, dotenv) is False
    )  # the environment first
    assert consent_from_env({}, tmp_path / "missing.env") is None


def test_a_service_that_answers_sandbox_paths_is_still_real(
    no_authzkit_env: None, monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox
) -> None:
    """The sandbox itself, not started by this process: ``/sandbox/v1`` answers, yet it is
    configured like any environment, so no wrong answer without consent."""
    for name, value in real_environ(sandbox.base_url, sandbox).items():
        monkeypatch.setenv(name, value)
    with connect() as connection:
        steps = list(FlowRunner(connection).bad_challenge_solution())
    assert [(s.outcome, s.skipped, s.expected) for s in steps] == [
        ("skipped (real environment)", True, True)
    ]
    assert sandbox.stats()["authorize"] == {}, "nothing at all was sent"


def test_the_embedded_sandbox_gets_its_wrong_answer_without_consent(no_authzkit_env: None) -> None:
    with connect(key_size=2048) as connection:
        steps = list(FlowRunner(connection).bad_challenge_solution())
        stats = connection.sandbox.stats()["authorize"]  # type: ignore[union-attr]
    assert [(s.error_type, s.expected) for s in steps] == [(WRONG, True)]
    assert stats.get(WRONG) == 1


# ------------------------------------------------------------------------------- demo
def test_demo_skips_the_wrong_answer_and_still_exits_0(
    real: dict[str, str], sandbox: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    before = wrong_answers(sandbox)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert wrong_answers(sandbox) == before
    line = next(line for line in out.splitlines() if "wrong answer" in line and "skipped" in line)
    assert "skipped (real environment)" in line and "unexpected" not in line
    assert out.count(SKIP_MESSAGE) == 1
    assert "all 11 steps ended as expected, 1 skipped" in out
    for harmless in HARMLESS:  # unrecognized_key included: a throwaway key
        assert harmless in out
    assert WRONG not in out
    assert not any(shows(real[name], out) for name in SECRETS)


@pytest.mark.parametrize("consent", [["--allow-wrong-answers"], []])
def test_demo_with_consent_sends_exactly_one(
    real: dict[str, str],
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    consent: list[str],
) -> None:
    if not consent:
        monkeypatch.setenv(ALLOW_WRONG_ANSWERS_VAR, "1")
    before = wrong_answers(sandbox)
    assert main(["demo", *consent]) == 0
    out = capsys.readouterr().out
    assert wrong_answers(sandbox) == before + 1
    assert WRONG in out and "all 12 steps ended as expected" in out
    assert "skipped" not in out


# ------------------------------------------------------------------------------ trace
@pytest.mark.parametrize("flow", ["errors", "bad_challenge_solution"])
def test_trace_skips_the_wrong_answer_saying_why(
    real: dict[str, str], sandbox: Sandbox, capsys: pytest.CaptureFixture[str], flow: str
) -> None:
    before = wrong_answers(sandbox)
    assert main(["trace", flow, "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert wrong_answers(sandbox) == before
    assert "| wrong answer | - | skipped (real environment) |" in captured.out
    assert SKIP_MESSAGE in captured.out  # the document says why, for its readers
    assert captured.err.count("\n") == 1 and SKIP_MESSAGE in captured.err
    assert WRONG not in captured.out
    if flow == "errors":
        for harmless in HARMLESS:
            assert harmless in captured.out


@pytest.mark.parametrize("flow", ["errors", "bad_challenge_solution"])
def test_trace_with_consent_sends_exactly_one(
    real: dict[str, str], sandbox: Sandbox, capsys: pytest.CaptureFixture[str], flow: str
) -> None:
    before = wrong_answers(sandbox)
    assert main(["trace", flow, "--allow-wrong-answers", "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert wrong_answers(sandbox) == before + 1
    assert f"Authorization-->>RS: 403 {WRONG}" in captured.out
    assert "skipped" not in captured.out + captured.err


# --------------------------------------------------------------------------- notebook
def run_notebook(tmp_path: Path) -> list[str]:
    """Execute notebook 05 in a kernel that inherits this process's ``AUTHZKIT_*``; the
    text of its stream outputs."""
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    execute_notebook(notebook, cwd=tmp_path, sockets=tmp_path / "kernel", timeout=180)
    return [
        "".join(output.get("text", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    ]


@pytest.mark.slow
def test_notebook_05_on_a_real_environment(
    real: dict[str, str], sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert ALLOW_WRONG_ANSWERS_VAR not in os.environ
    before = wrong_answers(sandbox)
    text = "\n".join(run_notebook(tmp_path))
    assert wrong_answers(sandbox) == before
    assert f"a wrong PIN{' ' * 31} -> {SKIP_MESSAGE}" in text
    assert "SPEC types provoked: 7 of 8\nmissing: none\n" in text
    assert f"skipped on purpose (a wrong answer needs consent): ['{WRONG}']" in text
    assert "HTTP 403 srn:error:unrecognized_key" in text  # on a real environment too
    assert "client closed" in text

    monkeypatch.setenv(ALLOW_WRONG_ANSWERS_VAR, "1")
    text = "\n".join(run_notebook(tmp_path))
    assert wrong_answers(sandbox) == before + 1
    assert f"HTTP 403 {WRONG}" in text
    assert "SPEC types provoked: 8 of 8\nmissing: none\n" in text
    assert not any(shows(real[name], text) for name in SECRETS)
