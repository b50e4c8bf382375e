"""The load test's preflight, in-process against a sandbox made to look real (reached through
``AUTHZKIT_*`` and a subjects file, its world never read): one authorize per distinct
subject, refused subjects named and dropped, a run nobody can pass stopped before any load."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from authzkit import Sandbox
from authzkit.loadtest.preflight import (
    CAP,
    Preflight,
    check_before_load,
    unfixable,
    write_subjects_without,
)
from authzkit.loadtest.record.subjects import subjects_from_csv
from authzkit.wire.children import free_port
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, TransportError, UnauthorizedError

from support.loadtest import write_subjects

ACCOUNT = "srn:resource:account"


def real_settings(sb: Sandbox, **extra: str) -> Settings:
    """Settings of an environment authzkit did not start: it is reached as a real one."""
    assert sb.client_secret is not None, "the sandbox's client has no secret"
    return Settings.from_env(
        {
            "AUTHZKIT_BASE_URL": sb.base_url,
            "AUTHZKIT_CLIENT_ID": sb.client_id,
            "AUTHZKIT_CLIENT_SECRET": sb.client_secret,
            **extra,
        },
        dotenv=None,
    )


def alice_rows(sb: Sandbox) -> list[list[str]]:
    """Two good rows: alice's session on each of her accounts."""
    token = sb.session_token("alice")
    return [[token, r.id, ACCOUNT, "1234"] for r in sb.world.owned_by("alice")]


def preflight(
    sb: Sandbox,
    tmp_path: Path,
    subjects: Path,
    *,
    kind: str = "challenge",
    action: str = "transfer_funds",
    settings: Settings | None = None,
) -> tuple[Preflight, Path | None]:
    (tmp_path / "private").mkdir(exist_ok=True)
    actions = {"plain": None, "challenge": None, kind: action}
    user_class = "ChallengeUser" if kind == "challenge" else "AuthorizeUser"
    return check_before_load(
        settings or real_settings(sb),
        host=sb.base_url,
        kind=kind,
        actions=actions,
        user_class=user_class,
        subjects=subjects,
        options={},
        out=tmp_path,
        private=tmp_path / "private",
    )


def authorize_calls(sb: Sandbox) -> int:
    return sum(sb.stats()["authorize"].values())


def test_one_bad_row_is_dropped_named_and_left_out_of_the_copy(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    good, other = alice_rows(sandbox)
    subjects = write_subjects(
        tmp_path / "subjects.csv", [good, ["not-a-session", good[1], ACCOUNT, "1234"], other]
    )
    before = authorize_calls(sandbox)
    result, given = preflight(sandbox, tmp_path, subjects)
    assert not result.fatal
    assert result.dropped == ("subjects.csv:3",)
    assert [c.verdict for c in result.checks] == ["pass", "refused", "pass"]
    assert authorize_calls(sandbox) == before + 3  # one per subject, nothing solved
    assert result.requests == {"token": 1, "authorize": 3}
    (warning,) = result.warnings()
    assert "subjects.csv:3" in warning and "srn:error:unauthenticated" in warning
    assert "3 subjects x 'transfer_funds': 2 challenge_required" in result.summary()
    # Locust gets a private copy without the refused row: same header, the good rows.
    assert given == tmp_path / "private" / "subjects.csv"
    assert stat.S_IMODE(given.stat().st_mode) == 0o600
    kept = subjects_from_csv(given)
    assert [s.token.reveal() for s in kept] == [good[0], other[0]]
    assert [s.answers["pin"].reveal() for s in kept] == ["1234", "1234"]
    report = (tmp_path / "preflight.json").read_text()
    assert json.loads(report)["dropped"] == ["subjects.csv:3"]
    assert good[0] not in report and "not-a-session" not in report


def test_a_wrong_action_stops_the_run_naming_action_rows_and_type(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    subjects = write_subjects(tmp_path / "subjects.csv", alice_rows(sandbox))
    result, _ = preflight(sandbox, tmp_path, subjects, action="approve_payment")
    assert result.fatal and result.dropped == ()
    message = result.error_message()
    for part in (
        "'approve_payment'",
        "subjects.csv:2, subjects.csv:3",
        "srn:error:unauthorized (HTTP 403)",
        "--challenge-action",
        "AUTHZKIT_CHALLENGE_ACTION",
        "No load was sent",
    ):
        assert part in message, message
    assert json.loads((tmp_path / "preflight.json").read_text())["fatal"] is True


def test_the_scenario_decides_what_passes(sandbox: Sandbox, tmp_path: Path) -> None:
    """A challenge is the challenge scenario's pass (nothing is solved); an action that
    authorizes without one can never make its round trip, and the reverse."""
    subjects = write_subjects(tmp_path / "subjects.csv", alice_rows(sandbox)[:1])
    challenged, _ = preflight(sandbox, tmp_path, subjects)
    assert [(c.answer, c.status, c.verdict) for c in challenged.checks] == [
        ("challenge_required", 403, "pass")
    ]
    no_challenge, _ = preflight(sandbox, tmp_path, subjects, action="show_account_balance_public")
    assert no_challenge.fatal
    assert "must be an action that demands a challenge" in no_challenge.error_message()
    plain, _ = preflight(
        sandbox, tmp_path, subjects, kind="plain", action="show_account_balance_public"
    )
    assert [c.verdict for c in plain.checks] == ["pass"]
    demanding, _ = preflight(sandbox, tmp_path, subjects, kind="plain", action="transfer_funds")
    assert demanding.fatal and "--action NAME or AUTHZKIT_PLAIN_ACTION" in (
        demanding.error_message()
    )


def test_a_refused_client_is_asked_once_not_per_subject(sandbox: Sandbox, tmp_path: Path) -> None:
    subjects = write_subjects(tmp_path / "subjects.csv", alice_rows(sandbox))
    before = sandbox.stats()
    result, _ = preflight(
        sandbox,
        tmp_path,
        subjects,
        settings=real_settings(sandbox, AUTHZKIT_CLIENT_SECRET="wrong-s3cret-value"),
    )
    assert result.fatal and result.requests == {"token": 1}
    assert sandbox.stats()["authorize"] == before["authorize"]  # no authorize was sent
    message = result.error_message()
    assert "srn:error:invalid_client (HTTP 401) for subjects.csv:2, subjects.csv:3" in message
    assert "token endpoint refused the client" in message
    assert "wrong-s3cret-value" not in message


def test_an_unreachable_service_is_no_run(sandbox: Sandbox, tmp_path: Path) -> None:
    subjects = write_subjects(tmp_path / "subjects.csv", alice_rows(sandbox))
    nowhere = f"http://127.0.0.1:{free_port()}"
    settings = Settings.from_env(
        {
            "AUTHZKIT_BASE_URL": nowhere,
            "AUTHZKIT_CLIENT_ID": "rs",
            "AUTHZKIT_CLIENT_SECRET": "s3cret-value",
        },
        dotenv=None,
    )
    (tmp_path / "private").mkdir()
    result, _ = check_before_load(
        settings,
        host=nowhere,
        kind="plain",
        actions={"plain": "view_balance", "challenge": None},
        user_class="AuthorizeUser",
        subjects=subjects,
        options={},
        out=tmp_path,
        private=tmp_path / "private",
    )
    assert result.fatal and {c.answer for c in result.checks} == {"no answer"}
    assert "authorize" not in result.requests  # the token endpoint's silence ended it
    message = result.error_message()
    assert "'view_balance'" in message and "check AUTHZKIT_BASE_URL" in message
    assert "s3cret-value" not in message


def test_at_most_cap_distinct_subjects_are_asked(sandbox: Sandbox, tmp_path: Path) -> None:
    resource = sandbox.world.owned_by("alice")[0].id
    rows = [[sandbox.session_token("alice"), resource, ACCOUNT, ""] for _ in range(CAP + 3)]
    rows.insert(1, rows[0])  # the same subject twice: asked once, both rows named
    subjects = write_subjects(tmp_path / "subjects.csv", rows)
    before = authorize_calls(sandbox)
    result, given = preflight(
        sandbox, tmp_path, subjects, kind="plain", action="show_account_balance_public"
    )
    assert authorize_calls(sandbox) == before + CAP
    assert result.checks[0].rows == ("subjects.csv:2", "subjects.csv:3")
    assert len(result.checks) == CAP and len(result.unasked) == 3
    assert result.unasked[-1] == f"subjects.csv:{len(rows) + 1}"
    assert given == subjects  # nothing dropped: the file itself
    assert "(3 more unasked)" in result.summary()


def test_what_a_load_run_cannot_fix() -> None:
    assert unfixable(UnauthorizedError("no", type="srn:error:unauthorized", status=403))
    assert unfixable(TransportError("refused"))
    assert unfixable(AuthzError("x", type="srn:error:not_resource_server", status=403))
    # A 503 (a shedding service, an injected fault) is for the run to measure.
    assert not unfixable(AuthzError("busy", type="srn:error:service_unavailable", status=503))
    assert not unfixable(AuthzError("odd", type="srn:error:bad_request", status=400))


def test_the_filtered_copy_numbers_rows_like_the_reader(tmp_path: Path) -> None:
    source = tmp_path / "subjects.csv"
    source.write_text("subject_token,resource_id\n\nt1,r1\nt2,r2\n\nt3,r3\n", encoding="utf-8")
    labels = [s.label for s in subjects_from_csv(source)]
    assert labels == ["subjects.csv:2", "subjects.csv:3", "subjects.csv:4"]
    target = tmp_path / "kept.csv"
    assert write_subjects_without(source, ["subjects.csv:3", "other.csv:2"], target) == 2
    assert [(s.token.reveal(), s.resource_id) for s in subjects_from_csv(target)] == [
        ("t1", "r1"),
        ("t3", "r3"),
    ]
