"""Which action a load test sends, decided by one rule wherever it is chosen: the command's
plan, the Locust users' options, ``authzkit check``. Option > ``AUTHZKIT_*_ACTION`` > the
sandbox's demo action, and that last one only on a sandbox. In-process (no locust)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from authzkit.cli.main import build_parser, main
from authzkit.loadtest.driver import counted_since
from authzkit.loadtest.plan import locust_options, plan_run
from authzkit.loadtest.record.context import build_process_state, needed_actions
from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.wire.children import free_port
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION

from support.fake_service import FakeService
from support.loadtest import write_subjects

CREDENTIALS = {"AUTHZKIT_CLIENT_ID": "rs", "AUTHZKIT_CLIENT_SECRET": "s3cret-value"}


@pytest.fixture
def real_service() -> Iterator[dict[str, str]]:
    """A real environment's variables: a service that answers, and is no sandbox (its
    ``/sandbox/v1/world`` is a 404)."""
    service = FakeService().start()
    try:
        yield {"AUTHZKIT_BASE_URL": service.base_url, **CREDENTIALS}
    finally:
        service.stop()


def loadtest_args(*argv: str) -> Any:
    return build_parser().parse_args(["loadtest", *argv])


@pytest.fixture
def subjects(tmp_path: Path) -> Path:
    return write_subjects(tmp_path / "subjects.csv", [["t", "r", "srn:resource:account", ""]])


def test_the_command_line_plan(
    no_authzkit_env: None, subjects: Path, real_service: dict[str, str]
) -> None:
    # The sandbox the command starts: its demo actions, unless named.
    plan = plan_run(loadtest_args("--scenario", "challenge"), {})
    assert (plan.action, plan.named) == ("transfer_funds", False)
    plan = plan_run(
        loadtest_args("--scenario", "challenge"), {"AUTHZKIT_CHALLENGE_ACTION": "approve_payment"}
    )
    assert (plan.action, plan.named) == ("approve_payment", True)
    # Another environment: the variable, the option over the variable, never a demo name.
    environ = {**real_service, "AUTHZKIT_CHALLENGE_ACTION": "approve_payment"}
    plan = plan_run(loadtest_args("--scenario", "challenge", "--subjects", str(subjects)), environ)
    assert plan.actions == {"plain": None, "challenge": "approve_payment"}
    plan = plan_run(
        loadtest_args(
            "--scenario",
            "challenge",
            "--subjects",
            str(subjects),
            "--challenge-action",
            "close_account",
        ),
        environ,
    )
    assert plan.action == "close_account"
    extra = locust_options(plan, subjects)
    assert extra[extra.index("--challenge-action") + 1] == "close_account"
    assert "--action" not in extra  # nothing names a plain action there: none is sent
    with pytest.raises(ConfigError) as caught:
        plan_run(loadtest_args("--subjects", str(subjects)), environ)  # authorize scenario
    assert "--action NAME or set AUTHZKIT_PLAIN_ACTION" in str(caught.value)


def test_an_action_after_the_double_dash_is_refused(no_authzkit_env: None) -> None:
    """The preflight must ask with the action locust sends: one way to give it."""
    with pytest.raises(ConfigError, match="give --challenge-action to `authzkit loadtest`"):
        plan_run(loadtest_args("--scenario", "challenge", "--", "--challenge-action=x"), {})


def test_missing_action_on_a_real_environment_exits_2_naming_option_and_variable(
    no_authzkit_env: None,
    subjects: Path,
    real_service: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    for name, value in real_service.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "run"
    code = main(
        ["loadtest", "--scenario", "challenge", "--subjects", str(subjects), "--out", str(out)]
    )
    error = capsys.readouterr().err
    assert code == 2
    assert "--challenge-action NAME or set AUTHZKIT_CHALLENGE_ACTION" in error
    assert "'transfer_funds' is assumed only on an authzkit sandbox whose world lists it" in error
    assert "s3cret-value" not in error and not out.exists()


def test_fault_flags_need_the_sandbox_the_command_starts(
    no_authzkit_env: None,
    subjects: Path,
    real_service: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    for name, value in real_service.items():
        monkeypatch.setenv(name, value)
    assert (
        main(
            [
                "loadtest",
                "--subjects",
                str(subjects),
                "--action",
                "view",
                "--error-rate",
                "0.1",
                "--pause-every",
                "2",
                "--pause-ms",
                "100",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "--error-rate, --pause-every, --pause-ms: fault flags configure the sandbox" in error
    assert "AUTHZKIT_BASE_URL" in error
    for name in real_service:
        monkeypatch.delenv(name)
    assert main(["loadtest", "--pause-ms", "100", "--out", str(tmp_path / "run")]) == 2
    assert "--pause-every is required with --pause-ms" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # out of range: refused while parsing
        main(["loadtest", "--error-rate", "2", "--out", str(tmp_path / "run")])
    assert refused.value.code == 2
    assert "--error-rate: must be a ratio >= 0 and <= 1" in capsys.readouterr().err


def users_options(**overrides: Any) -> SimpleNamespace:
    """Locust's parsed options as the users see them (``--action`` unset: ``""``)."""
    values = {
        "auth_url": "",
        "client_id": "",
        "client_secret": "",
        "subjects": "",
        "action": "",
        "challenge_action": "",
        "wait_time": "0",
        "user_classes": [],
    }
    return SimpleNamespace(**{**values, **overrides})


def test_the_users_options_follow_the_same_rule(
    sandbox: Sandbox, no_authzkit_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Reading the sandbox's world (no subjects file): its demo actions.
    state = build_process_state(users_options(), sandbox.base_url)
    assert (state.sandbox, state.action, state.challenge_action) == (
        True,
        DEFAULT_PLAIN_ACTION,
        DEFAULT_CHALLENGE_ACTION,
    )
    # Subjects and credentials given: still a sandbox whose world lists the demo names.
    alice = sandbox.world.owned_by("alice")[0].id
    given = users_options(
        subjects=str(
            write_subjects(
                tmp_path / "s.csv",
                [[sandbox.session_token("alice"), alice, "srn:resource:account", "1234"]],
            )
        ),
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        user_classes=["ChallengeUser"],
    )
    state = build_process_state(given, sandbox.base_url)
    assert (state.sandbox, state.challenge_action) == (False, DEFAULT_CHALLENGE_ACTION)
    # No sandbox there: nothing is assumed.
    nowhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(
        ConfigError, match="--challenge-action NAME or set AUTHZKIT_CHALLENGE_ACTION"
    ):
        build_process_state(given, nowhere)
    given.user_classes = ["FastAuthorizeUser"]  # sends the plain action only
    with pytest.raises(ConfigError, match="--action NAME or set AUTHZKIT_PLAIN_ACTION"):
        build_process_state(given, nowhere)
    monkeypatch.setenv("AUTHZKIT_PLAIN_ACTION", "view_balance")
    state = build_process_state(given, nowhere)
    assert (state.action, state.challenge_action) == ("view_balance", "")
    given.action = DEFAULT_PLAIN_ACTION  # the option wins over the variable
    assert build_process_state(given, nowhere).action == DEFAULT_PLAIN_ACTION


def test_a_sandbox_world_without_the_demo_names_assumes_none(
    no_authzkit_env: None, tmp_path: Path
) -> None:
    """The demo name is used where a world lists it, not merely where a sandbox answers."""
    world = World.default().to_json()
    for action in world["actions"]:
        action["name"] = {DEFAULT_CHALLENGE_ACTION: "approve_payment"}.get(
            action["name"], action["name"]
        )
    with Sandbox(world=World.from_json(world), key_size=2048) as staging:
        alice = staging.world.owned_by("alice")[0].id
        given = users_options(
            subjects=str(
                write_subjects(
                    tmp_path / "s.csv",
                    [[staging.session_token("alice"), alice, "srn:resource:account", "1234"]],
                )
            ),
            client_id=staging.client_id,
            client_secret=staging.client_secret,
            user_classes=["ChallengeUser"],
        )
        with pytest.raises(ConfigError, match="--challenge-action NAME"):
            build_process_state(given, staging.base_url)
        given.challenge_action = "approve_payment"
        assert build_process_state(given, staging.base_url).challenge_action == "approve_payment"


def test_which_classes_send_which_action() -> None:
    assert needed_actions(["ChallengeUser", "OpenChallengeUser"]) == {"challenge"}
    assert needed_actions(["FastAuthorizeUser", "TokenRefreshUser"]) == {"plain"}
    assert needed_actions([]) == {"plain", "challenge"}  # every class of the locustfile


def test_check_takes_the_actions_as_options_too(
    sandbox: Sandbox, no_authzkit_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``authzkit check --action`` does what AUTHZKIT_PLAIN_ACTION does."""
    world = sandbox.world
    foreign = world.foreign_to("alice")
    assert foreign is not None, "the world has no resource foreign to alice"
    assert sandbox.client_secret is not None, "the sandbox's client has no secret"
    for name, value in {
        "AUTHZKIT_BASE_URL": sandbox.base_url,
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        "AUTHZKIT_SUBJECT_TOKEN": sandbox.session_token("alice"),
        "AUTHZKIT_RESOURCE_ID": world.owned_by("alice")[0].id,
        "AUTHZKIT_FOREIGN_RESOURCE_ID": foreign.id,
    }.items():
        monkeypatch.setenv(name, value)

    def row(*options: str) -> dict[str, Any]:
        report = tmp_path / "check.json"
        main(["check", "--only", "errors.unauthorized", "--json", str(report), *options])
        return next(
            r for r in json.loads(report.read_text())["rows"] if r["id"] == "errors.unauthorized"
        )

    assert row()["verdict"] == "skip"  # no plain action named: the row cannot run
    assert row("--action", "show_account_balance_public")["verdict"] == "pass"
    monkeypatch.setenv("AUTHZKIT_PLAIN_ACTION", "show_account_balance_public")
    assert row()["verdict"] == "pass"


def test_the_sandbox_counters_of_the_run_leave_out_what_came_before() -> None:
    before = {"tokens_issued": 1, "authorize": {"srn:error:unauthorized": 2}}
    after = {
        "tokens_issued": 3,
        "keys_served": 1,
        "authorize": {"srn:error:unauthorized": 2, "authorized": 40},
    }
    assert counted_since(after, before) == {
        "tokens_issued": 2,
        "keys_served": 1,
        "authorize": {"authorized": 40},
    }
