"""The locustfiles' users against a sandbox process: rows, outcomes, token calls."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess, free_port

from .support import AUTHORIZE_FILE, TOKEN_FILE, locust

pytestmark = pytest.mark.slow


def test_plain_authorize_over_both_clients(sandbox_process: SandboxProcess,
                                           tmp_path: Path) -> None:
    before = sandbox_process.admin().stats()
    run = locust(AUTHORIZE_FILE, ["AuthorizeUser", "FastAuthorizeUser"],
                 host=sandbox_process.base_url, out=tmp_path,
                 extra=["--max-p95-ms", "60000", "--max-failure-ratio", "0"])
    run.assert_clean()
    authorize = run.row("POST", "authorize")
    assert authorize["num_requests"] > 20
    assert run.row("POST", "token")["num_requests"] <= 3  # one provider for the process
    after = sandbox_process.admin().stats()
    authorized = after["authorize"].get("authorized", 0) - before["authorize"].get("authorized", 0)
    assert authorized == authorize["num_requests"]
    assert run.summary["thresholds"] == {**run.summary["thresholds"], "checked": True,
                                         "passed": True, "problems": []}
    assert run.summary["token_provider"]["processes"] == 1


def test_challenge_round_trip_rows(sandbox_process: SandboxProcess, tmp_path: Path) -> None:
    before = sandbox_process.admin().stats()
    run = locust(AUTHORIZE_FILE, ["ChallengeUser", "FastChallengeUser"],
                 host=sandbox_process.base_url, out=tmp_path)
    run.assert_clean()
    flows = run.row("FLOW", "challenge round trip")["num_requests"]
    assert flows > 10
    # the 403 challenge is a success on the "authorize" row; one JWE and one solution per flow
    assert run.row("POST", "authorize")["num_requests"] >= flows
    assert run.row("JWE", "build_solution")["num_requests"] >= flows
    assert run.row("POST", "authorize:solution")["num_requests"] >= flows
    assert run.row("GET", "keys")["num_requests"] == 1  # one shared key cache
    issued = sandbox_process.admin().stats()["challenges_issued"] - before["challenges_issued"]
    assert issued == run.row("POST", "authorize")["num_requests"]


def test_unexpected_outcomes_are_failures_with_the_error_type(
        sandbox_process: SandboxProcess, tmp_path: Path) -> None:
    # A plain user pointed at an action that demands a challenge, a challenge user at one
    # that does not: neither is what the scenario expects.
    run = locust(AUTHORIZE_FILE, ["AuthorizeUser", "ChallengeUser"],
                 host=sandbox_process.base_url, out=tmp_path, users=2, run_time="2s",
                 extra=["--action", "transfer_funds",
                        "--challenge-action", "show_account_balance_public",
                        "--max-failure-ratio", "0.01"])
    assert run.code == 1, run.output[-2000:]
    errors = {(f["type"], f["name"]): f["error"] for f in run.summary["failures"]}
    assert "srn:error:challenge_required" in errors[("OUTCOME", "unexpected")]
    assert "expected srn:error:challenge_required" in errors[("FLOW", "challenge round trip")]
    assert run.summary["thresholds"]["passed"] is False


def test_failures_carry_the_service_error_type(sandbox_process: SandboxProcess,
                                               tmp_path: Path) -> None:
    admin = sandbox_process.admin()
    world = admin.world()
    bob_resource = next(r["id"] for r in world["resources"] if r["owner"] == "bob")
    subjects = tmp_path / "subjects.csv"
    with subjects.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["subject_token", "resource_id", "resource_type", "pin"])
        writer.writerow([admin.session_token("alice", ttl=3600), bob_resource,
                         "srn:resource:account", "1234"])
    run = locust(AUTHORIZE_FILE, ["FastAuthorizeUser"], host=sandbox_process.base_url,
                 out=tmp_path / "out", users=1, run_time="2s",
                 extra=["--subjects", str(subjects)])
    assert run.code == 1
    assert run.row("POST", "authorize")["num_failures"] > 0
    assert {f["error"] for f in run.summary["failures"]} == {
        "CatchResponseError('HTTP 403 srn:error:unauthorized')"}


def test_subjects_file_and_credentials_for_a_real_environment(
        sandbox_process: SandboxProcess, sandbox_env: dict[str, str], tmp_path: Path) -> None:
    """With --subjects and AUTHZKIT_CLIENT_*, nothing sandbox-only is used."""
    admin = sandbox_process.admin()
    world = admin.world()
    subjects = tmp_path / "subjects.csv"
    with subjects.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["subject_token", "resource_id", "resource_type", "pin", "totp_secret"])
        for subject in world["subjects"]:
            owned = next(r for r in world["resources"] if r["owner"] == subject["id"])
            writer.writerow([admin.session_token(subject["id"], ttl=3600), owned["id"],
                             owned["type"], subject["credentials"]["pin"],
                             subject["credentials"]["totp"]])
    run = locust(AUTHORIZE_FILE, ["ChallengeUser"], host=sandbox_process.base_url,
                 out=tmp_path / "out", users=2, run_time="2s", env=sandbox_env,
                 extra=["--subjects", str(subjects), "--challenge-action", "close_account"])
    run.assert_clean()
    assert run.row("FLOW", "challenge round trip")["num_requests"] > 0


def test_no_subjects_and_no_sandbox_is_a_clear_error(tmp_path: Path) -> None:
    nothing_there = f"http://127.0.0.1:{free_port()}"
    run = locust(AUTHORIZE_FILE, ["AuthorizeUser"], host=nothing_there, out=tmp_path,
                 users=1, run_time="20s", timeout=60)
    assert run.code == 2, run.output[-2000:]
    assert "no --subjects FILE (or no client credentials) given" in run.output
    assert "is not an authzkit sandbox" in run.output


def test_token_refresh_100_users_make_a_handful_of_token_calls(
        sandbox_process: SandboxProcess, tmp_path: Path) -> None:
    before = sandbox_process.admin().stats()["tokens_issued"]
    run = locust(TOKEN_FILE, ["TokenRefreshUser"], host=sandbox_process.base_url,
                 out=tmp_path, users=100, run_time="12s", extra=["--wait-time", "0.5-1.5"])
    # Refreshed a second ahead of an expiry the sandbox honours to the second: no call
    # ever meets an expired token (no 401, so no refresh-and-retry either).
    assert run.summary["failures"] == [], run.output[-3000:]
    calls = sandbox_process.admin().stats()["tokens_issued"] - before
    # 4 s tokens refreshed a second ahead: one call every 3 s, never one per user
    assert 2 <= calls <= 8, calls
    assert run.row("POST", "token")["num_requests"] == calls
    provider = run.summary["token_provider"]
    assert provider["token_calls"] == calls
    assert provider["refreshes"] == calls - 1
    assert run.row("POST", "authorize")["num_requests"] > 300  # ~100 calls/s for 11 s
