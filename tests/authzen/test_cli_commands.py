"""``authzkit authorize`` and ``authzkit search`` on an AuthZEN PDP as a user runs them:
the embedded sandbox with ``--dialect authzen``, a PDP found by its metadata at
``AUTHZKIT_BASE_URL``, what ``AUTHZKIT_SUBJECT_*``/``AUTHZKIT_RESOURCE_*`` supply, and the
exit codes: 0 for either decision, 1 when the PDP fails, 2 on bad input before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources

import pytest

from authzkit import Sandbox
from authzkit.cli import main
from authzkit.wire.authzen import EVALUATION_PATH, METADATA_PATH, metadata_document

from support.fake_pdp import FakePdp

pytestmark = pytest.mark.usefixtures("no_authzkit_env")
RECORD_1 = ["--resource-id", "record-1", "--resource-type", "record"]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.fixture(scope="module")
def pdp_url() -> Iterator[str]:
    """An AuthZEN sandbox started elsewhere: the certification fixture, pages of one."""
    shipped = resources.files("authzkit.sandbox.authzen") / "worlds" / "certification.json"
    world = {**json.loads(shipped.read_text(encoding="utf-8")), "page_size": 1}
    with Sandbox(dialect="authzen", world=world) as running:
        yield running.base_url


@pytest.fixture
def broken_pdp() -> Iterator[FakePdp]:
    running = FakePdp().start()
    running.routes[METADATA_PATH] = lambda _: (200, metadata_document(running.base_url))
    running.routes[EVALUATION_PATH] = lambda _: (500, "policy store unavailable")
    try:
        yield running
    finally:
        running.stop()


def test_authorize_on_the_embedded_sandbox_prints_the_decision_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(
        capsys, "authorize", "read", "--dialect", "authzen", "--subject", "alice", *RECORD_1
    )
    assert code == 0 and out[0].split(":")[0] == "authorized"
    code, out, _ = _run(
        capsys,
        "authorize",
        "write",
        "--dialect",
        "authzen",
        "--subject",
        "bob",
        "--subject-property",
        "role=admin",
        *RECORD_1,
    )
    assert code == 0 and out[0].split(":")[0] == "denied"  # a deny is an answer


def test_a_pdp_at_the_base_url_is_found_by_its_metadata(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, pdp_url: str
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", pdp_url)
    monkeypatch.setenv("AUTHZKIT_SUBJECT_ID", "bob")
    monkeypatch.setenv("AUTHZKIT_SUBJECT_PROPERTIES", '{"role": "admin"}')
    monkeypatch.setenv("AUTHZKIT_RESOURCE_ID", "record-2")
    monkeypatch.setenv("AUTHZKIT_RESOURCE_TYPE", "record")
    monkeypatch.setenv("AUTHZKIT_RESOURCE_PROPERTIES", '{"status": "archived"}')
    code, out, err = _run(capsys, "authorize", "write")
    assert (code, err) == (0, []) and out[0].startswith("authorized")
    code, out, _ = _run(capsys, "search", "action")
    assert code == 0 and out == ["read", "write"]


def test_search_prints_one_result_per_line_over_every_page(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, pdp_url: str
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", pdp_url)
    code, out, _ = _run(capsys, "search", "subject", "--action", "read", *RECORD_1)
    assert code == 0 and out == ["alice", "bob"]  # one per page: two pages followed
    code, out, _ = _run(
        capsys,
        "search",
        "resource",
        "--subject",
        "alice",
        "--action",
        "read",
        "--resource-type",
        "record",
        "--json",
    )
    assert code == 0 and [json.loads(line)["id"] for line in out] == ["record-1", "record-2"]


def test_metadata_naming_another_pdp_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, broken_pdp: FakePdp
) -> None:
    broken_pdp.routes[METADATA_PATH] = lambda _: (200, metadata_document("https://pdp.example"))
    monkeypatch.setenv("AUTHZKIT_BASE_URL", broken_pdp.base_url)
    monkeypatch.setenv("AUTHZKIT_DIALECT", "authzen")
    code, out, err = _run(capsys, "authorize", "read", "--subject", "alice", *RECORD_1)
    assert (code, out, len(err)) == (2, [], 1)
    assert "policy_decision_point 'https://pdp.example'" in err[0]
    assert broken_pdp.posted(EVALUATION_PATH) == []


def test_a_failing_pdp_is_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, broken_pdp: FakePdp
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", broken_pdp.base_url)
    code, out, err = _run(capsys, "authorize", "read", "--subject", "alice", *RECORD_1)
    assert (code, out, len(err)) == (1, [], 1) and "policy store unavailable" in err[0]


@pytest.mark.parametrize(
    ("argv", "variables", "culprit"),
    [
        (["authorize", "read", "--context", "no-equals-sign"], {}, "--context"),
        (["authorize", "read", "--resource-property", "=x"], {}, "--resource-property"),
        (["authorize", "read", "--dialect", "klingon"], {}, "klingon"),
        (["authorize", "read"], {"AUTHZKIT_SUBJECT_PROPERTIES": "[1]"}, "AUTHZKIT_SUBJECT_PROP"),
        (["search", "subject"], {"AUTHZKIT_DIALECT": "klingon"}, "AUTHZKIT_DIALECT"),
        (["search", "resource", "--action", "read"], {}, "--subject or AUTHZKIT_SUBJECT_ID"),
        (["search", "subject", "--limit", "-1"], {}, "--limit"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_call(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    broken_pdp: FakePdp,
    argv: list[str],
    variables: dict[str, str],
    culprit: str,
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", broken_pdp.base_url)
    monkeypatch.setenv("AUTHZKIT_DIALECT", "authzen")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    try:
        code, out, err = _run(capsys, *argv, *RECORD_1)
    except SystemExit as exit_:  # argparse's own refusal
        code, (_, printed) = int(exit_.code or 0), capsys.readouterr()
        out, err = [], printed.splitlines()
    assert (code, out, len(err)) == (2, [], 1) and culprit in err[0]
    assert [r.method for r in broken_pdp.received if r.method == "POST"] == []
