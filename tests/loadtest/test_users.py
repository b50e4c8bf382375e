"""The locustfiles' users against a sandbox process: rows, outcomes, token calls.

The clean runs of every user class go through both dialects (``dialect_service``): the draft's
token path, and the published dialect's OIDC issuer with the client authentication given
as explicit locust options (``--issuer``, ``--client-auth``, ``--client-key-file``), as a
tester would point them at the provider's real sandbox.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from authzkit.client.token import refresh_margin
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import free_port
from authzkit.wire.jwe import KeyPair

from support.loadtest import (
    AUTHORIZE_FILE,
    DISCOVERY_ROW,
    TOKEN_FILE,
    TOKEN_TTL,
    LocustRun,
    Service,
    locust,
    token_options,
    write_subjects,
)

pytestmark = pytest.mark.slow

UNAUTHENTICATED_401 = "RequestFailure('HTTP 401 srn:error:unauthenticated')"


def assert_token_rows(run: LocustRun, dialect: str, tokens_issued: int) -> None:
    """Every token the sandbox issued is on the ``token`` row, and the published dialect's
    token endpoint was discovered once (the draft path needs no discovery)."""
    assert run.row("POST", "token")["num_requests"] == tokens_issued
    assert run.summary["token_provider"]["token_calls"] == tokens_issued
    if dialect == "published":
        assert run.row(*DISCOVERY_ROW)["num_requests"] == 1
    else:
        assert DISCOVERY_ROW not in run.rows


def test_plain_authorize_over_both_clients(dialect_service: Service, tmp_path: Path) -> None:
    admin = dialect_service.process.admin()
    before = admin.stats()
    run = locust(
        AUTHORIZE_FILE,
        ["AuthorizeUser", "FastAuthorizeUser"],
        host=dialect_service.process.base_url,
        out=tmp_path,
        run_time="2s",
        extra=[*dialect_service.options, "--max-p95-ms", "60000", "--max-failure-ratio", "0"],
    )
    run.assert_clean()
    authorize = run.row("POST", "authorize")
    assert authorize["num_requests"] > 0
    after = admin.stats()
    tokens = after["tokens_issued"] - before["tokens_issued"]
    assert 1 <= tokens <= 3  # one provider for the process
    assert_token_rows(run, dialect_service.dialect, tokens)
    outcomes = {k: n - before["authorize"].get(k, 0) for k, n in after["authorize"].items()}
    # every call the service saw was authorized: no 401 met, not even one retried unseen
    assert {k: n for k, n in outcomes.items() if n} == {"authorized": authorize["num_requests"]}
    assert run.summary["thresholds"] == {
        **run.summary["thresholds"],
        "checked": True,
        "passed": True,
        "problems": [],
    }
    assert run.summary["token_provider"]["processes"] == 1


def test_challenge_round_trip_rows(dialect_service: Service, tmp_path: Path) -> None:
    admin = dialect_service.process.admin()
    before = admin.stats()
    run = locust(
        AUTHORIZE_FILE,
        ["ChallengeUser", "FastChallengeUser"],
        host=dialect_service.process.base_url,
        out=tmp_path,
        run_time="2s",
        extra=dialect_service.options,
    )
    run.assert_clean()
    flows = run.row("FLOW", "challenge round trip")["num_requests"]
    assert flows > 0
    # the 403 challenge is a success on the "authorize" row; one JWE and one solution per flow
    assert run.row("POST", "authorize")["num_requests"] >= flows
    assert run.row("JWE", "build_solution")["num_requests"] >= flows
    assert run.row("POST", "authorize:solution")["num_requests"] >= flows
    assert run.row("GET", "keys")["num_requests"] == 1  # one shared key cache
    after = admin.stats()
    issued = after["challenges_issued"] - before["challenges_issued"]
    assert issued == run.row("POST", "authorize")["num_requests"]
    issued_tokens = after["tokens_issued"] - before["tokens_issued"]
    assert_token_rows(run, dialect_service.dialect, issued_tokens)


def test_published_dialect_with_client_secret_post(
    published_process: SandboxProcess, tmp_path: Path
) -> None:
    """``--client-auth client_secret_post``: the secret travels in the environment only."""
    admin = published_process.admin()
    before = admin.stats()
    run = locust(
        AUTHORIZE_FILE,
        ["AuthorizeUser", "FastChallengeUser"],
        host=published_process.base_url,
        out=tmp_path,
        run_time="2s",
        extra=token_options(published_process, "client_secret_post"),
        env={"AUTHZKIT_CLIENT_SECRET": published_process.client_secret.reveal()},
    )
    run.assert_clean()
    assert run.row("POST", "authorize")["num_requests"] > 0
    assert run.row("FLOW", "challenge round trip")["num_requests"] > 0
    assert_token_rows(run, "published", admin.stats()["tokens_issued"] - before["tokens_issued"])


def test_published_dialect_with_a_key_the_issuer_does_not_know(
    published_process: SandboxProcess, tmp_path: Path
) -> None:
    """The assertion really is signed with ``--client-key-file``: another key is refused."""
    stranger = tmp_path / "stranger.pem"
    stranger.write_text(KeyPair.generate(use="sig", size=2048).private_pem())
    options = token_options(published_process)
    options[options.index("--client-key-file") + 1] = str(stranger)
    before = published_process.admin().stats()
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=published_process.base_url,
        out=tmp_path / "out",
        users=1,
        run_time="2s",
        extra=options,
    )
    assert run.code == 1, run.output[-2000:]
    assert run.row("POST", "token")["num_failures"] > 0
    assert "invalid_client" in str(run.summary["failures"])
    after = published_process.admin().stats()
    assert after["tokens_issued"] == before["tokens_issued"]
    assert after["authorize"] == before["authorize"]  # no call went out without a token


def test_one_invalid_subject_under_ambiguous_401s_costs_one_token_call(
    published_process: SandboxProcess, tmp_path: Path
) -> None:
    """Issue 11's Locust proof: 10 FastHttpUsers share ONE subject token that is no session,
    and the published dialect answers its authorize calls with the same bare 401 it gives
    an expired access token. For 2 token lifetimes the users call all along: every
    call fails as unauthenticated, and the token calls stay those a valid subject needs,
    plus the one refresh that proved the session invalid — not one per request.

    The users refresh a quarter of a lifetime ahead (DESIGN: proportional margin), so a
    valid subject's run already uses one token per ``TTL - margin`` seconds: 3 tokens in
    2 lifetimes of 4 s. Without the remembered-sessions memory every refused request
    refreshes the token (hundreds of calls in this run).
    """
    admin = published_process.admin()
    resource = next(r["id"] for r in admin.world()["resources"] if r["owner"] == "alice")
    subjects = write_subjects(
        tmp_path / "subjects.csv", [["not-a-session-token", resource, "srn:resource:account", ""]]
    )
    lifetimes = 2
    seconds = lifetimes * TOKEN_TTL
    before = admin.stats()
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=published_process.base_url,
        out=tmp_path / "out",
        users=10,  # hundreds of refused calls: as many token calls without the memory
        run_time=f"{seconds}s",
        extra=[*token_options(published_process), "--subjects", str(subjects)],
    )
    after = admin.stats()
    calls = after["tokens_issued"] - before["tokens_issued"]
    authorize = run.row("POST", "authorize")
    assert run.code == 1, run.output[-2000:]  # failures, no start-up error
    # users kept calling all along: refused calls in the last lifetime too
    called = [r["second"] for r in run.timeline["records"] if r["row"] == "POST authorize"]
    assert max(called) >= (lifetimes - 1) * TOKEN_TTL, called
    assert authorize["num_failures"] == authorize["num_requests"]
    assert [(f["name"], f["error"]) for f in run.summary["failures"]] == [
        ("authorize", UNAUTHENTICATED_401)
    ]
    refused = after["authorize"]["srn:error:unauthenticated"] - before["authorize"].get(
        "srn:error:unauthenticated", 0
    )
    assert refused == authorize["num_requests"]  # each one went out (and nothing else did)
    assert run.row("POST", "token")["num_failures"] == 0
    tokens_a_valid_run_needs = math.ceil(seconds / (TOKEN_TTL - refresh_margin(TOKEN_TTL)))
    assert 1 <= calls <= tokens_a_valid_run_needs + 1, calls
    assert run.summary["token_provider"]["token_calls"] == calls


def test_unexpected_outcomes_are_failures_with_the_error_type(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    # A plain user pointed at an action that demands a challenge, a challenge user at one
    # that does not: neither is what the scenario expects.
    run = locust(
        AUTHORIZE_FILE,
        ["AuthorizeUser", "ChallengeUser"],
        host=sandbox_process.base_url,
        out=tmp_path,
        users=2,
        run_time="2s",
        extra=[
            "--action",
            "transfer_funds",
            "--challenge-action",
            "show_account_balance_public",
            "--max-failure-ratio",
            "0.01",
        ],
    )
    assert run.code == 1, run.output[-2000:]
    errors = {(f["type"], f["name"]): f["error"] for f in run.summary["failures"]}
    assert "srn:error:challenge_required" in errors[("OUTCOME", "unexpected")]
    assert "expected srn:error:challenge_required" in errors[("FLOW", "challenge round trip")]
    assert run.summary["thresholds"]["passed"] is False


def test_failures_carry_the_service_error_type(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    admin = sandbox_process.admin()
    world = admin.world()
    bob_resource = next(r["id"] for r in world["resources"] if r["owner"] == "bob")
    subjects = write_subjects(
        tmp_path / "subjects.csv",
        [[admin.session_token("alice", ttl=3600), bob_resource, "srn:resource:account", "1234"]],
    )
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=sandbox_process.base_url,
        out=tmp_path / "out",
        users=1,
        run_time="2s",
        extra=["--subjects", str(subjects)],
    )
    assert run.code == 1
    authorize = run.row("POST", "authorize")
    assert authorize["num_failures"] == authorize["num_requests"] > 0  # bob's account, every one
    assert {f["error"] for f in run.summary["failures"]} == {
        "RequestFailure('HTTP 403 srn:error:unauthorized')"
    }


def test_subjects_file_and_credentials_for_a_real_environment(
    sandbox_process: SandboxProcess,
    sandbox_process_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """With --subjects and AUTHZKIT_CLIENT_*, nothing sandbox-only is used."""
    admin = sandbox_process.admin()
    world = admin.world()
    rows = []
    for subject in world["subjects"]:
        owned = next(r for r in world["resources"] if r["owner"] == subject["id"])
        rows.append(
            [
                admin.session_token(subject["id"], ttl=3600),
                owned["id"],
                owned["type"],
                subject["credentials"]["pin"],
                subject["credentials"]["totp"],
            ]
        )
    subjects = write_subjects(
        tmp_path / "subjects.csv",
        rows,
        header=("subject_token", "resource_id", "resource_type", "pin", "totp_secret"),
    )
    run = locust(
        AUTHORIZE_FILE,
        ["ChallengeUser"],
        host=sandbox_process.base_url,
        out=tmp_path / "out",
        users=2,
        run_time="2s",
        env=sandbox_process_env,
        extra=["--subjects", str(subjects), "--challenge-action", "close_account"],
    )
    run.assert_clean()
    assert run.row("FLOW", "challenge round trip")["num_requests"] > 0


def test_no_subjects_and_no_sandbox_is_a_clear_error(tmp_path: Path) -> None:
    nothing_there = f"http://127.0.0.1:{free_port()}"
    run = locust(
        AUTHORIZE_FILE,
        ["AuthorizeUser"],
        host=nothing_there,
        out=tmp_path,
        users=1,
        run_time="20s",
        timeout=60,
    )
    assert run.code == 2, run.output[-2000:]
    assert "no --subjects FILE (or no client credentials) given" in run.output
    assert "is not an authzkit sandbox" in run.output


def test_token_refresh_100_users_make_a_handful_of_token_calls(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    before = sandbox_process.admin().stats()["tokens_issued"]
    seconds = 6  # a token lifetime and a half: refreshed at least once
    run = locust(
        TOKEN_FILE,
        ["TokenRefreshUser"],
        host=sandbox_process.base_url,
        out=tmp_path,
        users=100,
        run_time=f"{seconds}s",
        extra=["--wait-time", "0.5-1.5"],
    )
    # Refreshed a second ahead of an expiry the sandbox honours to the second: no call
    # ever meets an expired token (no 401, so no refresh-and-retry either).
    assert run.summary["failures"] == [], run.output[-3000:]
    calls = sandbox_process.admin().stats()["tokens_issued"] - before
    # 4 s tokens refreshed a second ahead: one call every 3 s, never one per user
    assert 2 <= calls <= math.ceil(seconds / (TOKEN_TTL - refresh_margin(TOKEN_TTL))) + 1, calls
    assert run.row("POST", "token")["num_requests"] == calls
    provider = run.summary["token_provider"]
    assert provider["token_calls"] == calls
    assert provider["refreshes"] == calls - 1
    assert run.row("POST", "authorize")["num_requests"] >= 100  # every user called
