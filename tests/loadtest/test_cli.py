"""``authzkit loadtest`` end to end: its own sandbox process, locust, the report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.sandbox.process import child_env

pytestmark = pytest.mark.slow

OUTPUTS = ("stats.json", "summary.json", "run.json", "sandbox_stats.json", "locust.html",
           "locust_stats_history.csv", "report.html", "latency_percentiles.png",
           "requests_per_second.png", "token_calls.png", "locustfile.py")


def authzkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "authzkit", *args], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=150,
                          check=False)


def test_challenge_scenario_writes_results_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit("loadtest", "--scenario", "challenge", "--fast", "-u", "3", "-t", "5s",
                    "--out", str(out), "--max-failure-ratio", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in OUTPUTS:
        assert (out / name).exists(), name
    assert "FastChallengeUser x 3 for 5s" in done.stdout
    assert " req/s  p95 " in done.stdout  # progress lines while it ran
    assert "FLOW challenge round trip" in done.stdout
    assert "report: " in done.stdout
    meta = json.loads((out / "run.json").read_text())
    assert meta["user_class"] == "FastChallengeUser" and meta["exit_code"] == 0
    for path in out.iterdir():  # the secret travels in the environment only
        assert b"sandbox-demo-secret" not in path.read_bytes(), path.name
    sandbox = json.loads((out / "sandbox_stats.json").read_text())
    stats = {e["name"]: e for e in json.loads((out / "stats.json").read_text())}
    assert sandbox["challenges_issued"] == stats["authorize"]["num_requests"]
    assert sandbox["tokens_issued"] == stats["token"]["num_requests"]

    again = authzkit("report", str(out), "--compare", str(out), "--max-regression", "0",
                     cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "compared with" in again.stdout


def test_token_scenario_over_two_processes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit("loadtest", "--scenario", "token", "-u", "20", "-t", "6s", "--processes",
                    "2", "--wait-time", "0.2-0.5", "--out", str(out), "--quiet",
                    "--max-failure-ratio", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["token_provider"]["processes"] == 2
    issued = json.loads((out / "sandbox_stats.json").read_text())["tokens_issued"]
    assert issued == summary["token_provider"]["token_calls"]
    assert 2 <= issued <= 8  # 4 s tokens, two providers, never one per user
    assert json.loads((out / "run.json").read_text())["token_ttl"] == 4


def test_real_environment_needs_a_subjects_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "https://authz.example")
    monkeypatch.setenv("AUTHZKIT_CLIENT_ID", "rs")
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", "s3cret-value")
    assert main(["loadtest", "--out", str(tmp_path / "run")]) == 1
    error = capsys.readouterr().err
    assert "needs --subjects FILE" in error and "s3cret-value" not in error


def test_bad_run_time_is_refused_before_anything_starts(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["loadtest", "-t", "soon", "--out", str(tmp_path / "run")]) == 1
    assert "run time must look like" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
