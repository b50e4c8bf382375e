"""A real-looking environment (AUTHZKIT_BASE_URL set to a running sandbox): inputs from
AUTHZKIT_*, a confirmation before any request, and never a wrong answer unless allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from authzkit import Sandbox
from authzkit.check import command, run_checks
from authzkit.cli.main import main
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError

WRONG = "srn:error:bad_challenge_solution"


def real_environ(sb: Sandbox, **extra: str) -> dict[str, str]:
    world = sb.world
    alice = world.owned_by("alice")[0]
    foreign = world.foreign_to("alice")
    assert sb.client_secret is not None, "the sandbox's client has no secret"
    assert foreign is not None, "the world has no resource foreign to alice"
    return {
        "AUTHZKIT_BASE_URL": sb.base_url,
        "AUTHZKIT_CLIENT_ID": sb.client_id,
        "AUTHZKIT_CLIENT_SECRET": sb.client_secret,
        "AUTHZKIT_SUBJECT_TOKEN": sb.session_token("alice"),
        "AUTHZKIT_RESOURCE_ID": alice.id,
        "AUTHZKIT_ANSWER_PIN": "1234",
        "AUTHZKIT_PLAIN_ACTION": "show_account_balance_public",
        "AUTHZKIT_CHALLENGE_ACTION": "transfer_funds",
        "AUTHZKIT_FOREIGN_RESOURCE_ID": foreign.id,
        **extra,
    }


def wrong_answers(sb: Sandbox) -> int:
    return sb.stats()["authorize"].get(WRONG, 0)


def test_no_wrong_answer_without_permission_and_exactly_one_with(sandbox: Sandbox) -> None:
    settings = Settings.from_env(real_environ(sandbox), dotenv=None)
    planned: list[tuple[int, int]] = []

    def confirm(count: int) -> bool:
        planned.append((count, sandbox.stats()["tokens_issued"]))
        return True

    before = wrong_answers(sandbox)
    issued = sandbox.stats()["tokens_issued"]
    report = run_checks(settings=settings, confirm=confirm)
    assert wrong_answers(sandbox) == before
    assert planned == [(planned[0][0], issued)], "confirmed before any request"
    assert report.target["real"] is True and report.target["dialect"] == "detected"
    row = report.row("errors.bad_challenge_solution")
    assert row.verdict == "skip" and "--allow-wrong-answers" in row.detail
    assert "fail" not in report.verdicts().values(), report.to_json()["rows"]
    for row_id in ("token.lifetime_honoured", "challenge.expiry", "access_token.expired"):
        assert report.row(row_id).verdict == "skip"
        assert "only on a sandbox" in report.row(row_id).detail
    # Inputs a real environment lacks name the variable that would enable the row.
    assert "AUTHZKIT_ANSWER_LOGIN_PASSWORD" in report.row("challenge.solved.login_password").detail
    assert report.row("challenge.solved.pin").verdict == "pass"

    allowed = run_checks(
        settings=settings, allow_wrong_answers=True, only="errors.bad_challenge_solution"
    )
    assert allowed.row("errors.bad_challenge_solution").verdict == "pass"
    assert wrong_answers(sandbox) == before + 1


def test_missing_inputs_skip_naming_the_variable(sandbox: Sandbox) -> None:
    environ = real_environ(sandbox)
    for name in ("AUTHZKIT_PLAIN_ACTION", "AUTHZKIT_FOREIGN_RESOURCE_ID"):
        del environ[name]
    report = run_checks(
        settings=Settings.from_env(environ, dotenv=None), only="errors.unauthorized"
    )
    row = report.row("errors.unauthorized")
    assert row.verdict == "skip" and "AUTHZKIT_PLAIN_ACTION" in row.detail


def test_refused_confirmation_sends_nothing(sandbox: Sandbox) -> None:
    settings = Settings.from_env(real_environ(sandbox), dotenv=None)
    issued = sandbox.stats()["tokens_issued"]
    with pytest.raises(ConfigError, match="not confirmed"):
        run_checks(settings=settings, confirm=lambda count: False)
    assert sandbox.stats()["tokens_issued"] == issued


def test_cli_without_yes_and_no_terminal_exits_2(
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in list(os.environ):
        if name.startswith("AUTHZKIT_"):
            monkeypatch.delenv(name)
    for name, value in real_environ(sandbox).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "CONFIRM_ABOVE", 5)
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert "pass --yes" in err and "not confirmed" in err
    assert main(["check", "--yes", "--only", "authorize.*"]) == 0


def test_check_follows_the_shared_wrong_answer_rule(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule of ``authzkit.shared.consent``: its message, and AUTHZKIT_ALLOW_WRONG_ANSWERS=1
    consents like ``--allow-wrong-answers`` (one wrong answer, no more)."""
    from authzkit.shared.consent import ALLOW_WRONG_ANSWERS_VAR, SKIP_MESSAGE

    settings = Settings.from_env(real_environ(sandbox), dotenv=None)
    monkeypatch.delenv(ALLOW_WRONG_ANSWERS_VAR, raising=False)
    before = wrong_answers(sandbox)
    row = run_checks(settings=settings, only="errors.bad_challenge_solution").row(
        "errors.bad_challenge_solution"
    )
    assert (row.verdict, row.detail) == ("skip", SKIP_MESSAGE)
    assert wrong_answers(sandbox) == before

    consenting = Settings.from_env(
        real_environ(sandbox, **{ALLOW_WRONG_ANSWERS_VAR: "1"}), dotenv=None
    )
    row = run_checks(settings=consenting, only="errors.bad_challenge_solution").row(
        "errors.bad_challenge_solution"
    )
    assert row.verdict == "pass"
    assert wrong_answers(sandbox) == before + 1
