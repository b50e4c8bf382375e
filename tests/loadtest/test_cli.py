"""``authzkit loadtest`` end to end: its own sandbox process (either dialect), locust, the
report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

from support.loadtest import write_subjects

pytestmark = pytest.mark.slow

OUTPUTS = (
    "stats.json",
    "summary.json",
    "run.json",
    "sandbox_stats.json",
    "locust.html",
    "locust_stats_history.csv",
    "report.html",
    "latency_percentiles.png",
    "requests_per_second.png",
    "token_calls.png",
    "locustfile.py",
)


def authzkit(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )


def test_challenge_scenario_writes_results_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--scenario",
        "challenge",
        "--fast",
        "-u",
        "3",
        "-t",
        "2s",
        "--wait-time",
        "0.02-0.05",  # counters are judged, not throughput
        "--out",
        str(out),
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in OUTPUTS:
        assert (out / name).exists(), name
    assert "FastChallengeUser x 3 for 2s" in done.stdout
    assert " req/s  p95 " in done.stdout  # progress lines while it ran
    assert "FLOW challenge round trip" in done.stdout
    assert "report: " in done.stdout
    meta = json.loads((out / "run.json").read_text())
    assert meta["user_class"] == "FastChallengeUser" and meta["exit_code"] == 0
    assert meta["command"] == "loadtest" and "--headless" in meta["locust_command"]
    for path in out.iterdir():  # the secret travels in the environment only
        assert b"sandbox-demo-secret" not in path.read_bytes(), path.name
    sandbox = json.loads((out / "sandbox_stats.json").read_text())
    stats = {e["name"]: e for e in json.loads((out / "stats.json").read_text())}
    assert sandbox["challenges_issued"] == stats["authorize"]["num_requests"]
    assert sandbox["tokens_issued"] == stats["token"]["num_requests"]
    # `authzkit report --compare` on run directories: tests/loadtest/test_report.py


def test_token_scenario_over_two_processes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--scenario",
        "token",
        "-u",
        "20",
        "-t",
        "3s",
        "--processes",
        "2",
        "--wait-time",
        "0.2-0.5",
        "--out",
        str(out),
        "--quiet",
        "--no-report",
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["token_provider"]["processes"] == 2
    issued = json.loads((out / "sandbox_stats.json").read_text())["tokens_issued"]
    assert issued == summary["token_provider"]["token_calls"]
    # One provider per process, not one per user: at most two tokens each (4 s tokens
    # refreshed a second ahead in a 3 s run), not 20. Not "two at least": on a busy machine
    # a process may start its users too late to ask for a token at all.
    assert 1 <= issued <= 2 * 2
    assert json.loads((out / "run.json").read_text())["token_ttl"] == 4


def test_published_dialect_token_scenario_runs_clean(tmp_path: Path) -> None:
    """``--dialect published``: the started sandbox speaks the provider's published API and
    the users get their tokens from its OIDC issuer with the demo client's private key,
    refreshing 4 s tokens without a single (ambiguous) 401."""
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--dialect",
        "published",
        "--scenario",
        "token",
        "-u",
        "10",
        "-t",
        "6s",
        "--wait-time",
        "0.1-0.3",
        "--out",
        str(out),
        "--quiet",
        "--no-report",  # the page of a run: test_challenge_scenario_writes_results_and_report
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(sandbox, published dialect)" in done.stdout
    meta = json.loads((out / "run.json").read_text())
    assert (meta["dialect"], meta["sandbox"], meta["exit_code"]) == ("published", True, 0)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"] == [] and summary["thresholds"]["passed"] is True
    stats = {(e["method"], e["name"]): e for e in json.loads((out / "stats.json").read_text())}
    assert stats[("GET", "openid-configuration")]["num_requests"] == 1  # the issuer's
    assert stats[("POST", "authorize")]["num_requests"] >= 10  # each user called
    sandbox = json.loads((out / "sandbox_stats.json").read_text())
    # every call the service saw was authorized: no 401 met, not even one retried unseen
    assert sandbox["authorize"] == {"authorized": stats[("POST", "authorize")]["num_requests"]}
    issued = sandbox["tokens_issued"]
    # 4 s tokens refreshed a second ahead over 6 s: a refresh happened, one provider
    assert 2 <= issued <= 3
    assert (
        issued
        == summary["token_provider"]["token_calls"]
        == stats[("POST", "token")]["num_requests"]
    )
    for path in out.iterdir():  # neither the demo secret nor the client key in any output
        content = path.read_bytes()
        assert b"sandbox-demo-secret" not in content, path.name
        assert b"PRIVATE KEY" not in content, path.name


def test_dialect_option_is_ignored_with_a_configured_environment(
    sandbox_process: SandboxProcess,
    sandbox_process_env: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With AUTHZKIT_BASE_URL no sandbox is started: ``--dialect`` changes nothing (the
    draft-dialect service configured is used through its draft token path)."""
    with pytest.raises(SystemExit):
        main(["loadtest", "--help"])
    assert "ignored with AUTHZKIT_BASE_URL" in " ".join(capsys.readouterr().out.split())
    admin = sandbox_process.admin()
    resource = next(r["id"] for r in admin.world()["resources"] if r["owner"] == "alice")
    subjects = write_subjects(
        tmp_path / "subjects.csv",
        [[admin.session_token("alice", ttl=3600), resource, "srn:resource:account", ""]],
    )
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--dialect",
        "published",
        "-u",
        "2",
        "-t",
        "2s",
        "--wait-time",
        "0.02-0.05",  # counters are judged, not throughput
        "--subjects",
        str(subjects),
        "--action",
        "show_account_balance_public",
        "--out",
        str(out),
        "--quiet",
        "--no-report",
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
        env=sandbox_process_env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # --no-report: the summary and the data, no page (``authzkit report`` writes it later)
    assert "Aggregated" in done.stdout and not (out / "report.html").exists()
    assert f"report: not written (--no-report); `authzkit report {out}` writes it" in done.stdout
    meta = json.loads((out / "run.json").read_text())
    assert (meta["sandbox"], meta["dialect"], meta["host"]) == (
        False,
        None,
        sandbox_process.base_url,
    )
    names = {e["name"] for e in json.loads((out / "stats.json").read_text())}
    assert names == {"token", "authorize"}  # the draft token path: nothing discovered


def test_a_service_that_does_not_answer_is_said_before_any_option_it_would_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "needs --subjects FILE": nothing answers at the URL, whatever else is missing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "http://127.0.0.1:9")  # discard: nothing answers
    monkeypatch.setenv("AUTHZKIT_CLIENT_ID", "rs")
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", "s3cret-value")
    assert main(["loadtest", "--out", str(tmp_path / "run")]) == 1
    assert capsys.readouterr().err == (
        "authzkit loadtest: no answer from http://127.0.0.1:9 (connection refused): "
        "is AUTHZKIT_BASE_URL right, and the service up?\n"
    )
    assert not (tmp_path / "run").exists()  # nothing started, nothing left


def test_the_open_model_end_to_end(tmp_path: Path) -> None:
    """``--rate``: the schedule, not the answers, decides when requests start."""
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--rate",
        "30",
        "-t",
        "2s",
        "--out",
        str(out),
        "--quiet",
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    meta = json.loads((out / "run.json").read_text())
    assert (meta["rate"], meta["arrivals"], meta["user_class"]) == (
        30,
        "constant",
        "OpenAuthorizeUser",
    )
    summary = json.loads((out / "summary.json").read_text())
    schedule = summary["schedule"]
    assert schedule["intended"] == 60  # 30/s for 2 s, evenly spaced: the schedule's count
    assert schedule["sent"] == schedule["intended"]
    stats = {(e["method"], e["name"]): e for e in json.loads((out / "stats.json").read_text())}
    authorize = stats[("POST", "authorize")]["num_requests"]
    assert authorize == schedule["sent"]
    assert summary["latency_us"]["POST authorize"]["count"] == authorize
    assert summary["service_time_us"]["POST authorize"]["count"] == authorize
    assert (out / "histograms.json").exists() and (out / "report.html").exists()
