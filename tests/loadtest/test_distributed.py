"""Locust's distributed mode on loopback: a master with two worker processes, and --processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess, child_env, free_port, stop_process

from .support import AUTHORIZE_FILE, locust, read_results

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sandbox_process() -> Iterator[SandboxProcess]:
    """Minute-long tokens: these runs are about distribution, not about refresh timing."""
    with SandboxProcess(token_ttl=60) as sandbox:
        yield sandbox


def test_master_with_two_workers(sandbox_process: SandboxProcess, tmp_path: Path) -> None:
    port = free_port()
    workers = [
        subprocess.Popen([sys.executable, "-m", "locust", "-f", str(AUTHORIZE_FILE), "--worker",
                          "--master-host", "127.0.0.1", "--master-port", str(port)],
                         env=child_env(), cwd=tmp_path, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        for _ in range(2)]
    try:
        master = subprocess.run(
            [sys.executable, "-m", "locust", "-f", str(AUTHORIZE_FILE), "--master",
             "--expect-workers", "2", "--expect-workers-max-wait", "30",
             "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port), "--headless",
             "-u", "6", "-r", "6", "-t", "4s", "--host", sandbox_process.base_url,
             "--json-file", str(tmp_path / "stats"),
             "--summary-file", str(tmp_path / "summary.json"),
             # custom arguments reach the workers with the spawn message
             "--wait-time", "0.01", "--max-failure-ratio", "0",
             "AuthorizeUser", "FastChallengeUser"],
            env=child_env(), cwd=tmp_path, capture_output=True, timeout=90, check=False)
        codes = [worker.wait(timeout=30) for worker in workers]
    finally:
        for worker in workers:
            stop_process(worker)
    run = read_results(tmp_path, master.returncode, master.stderr.decode(errors="replace"))
    run.assert_clean()
    assert codes == [0, 0]
    assert run.row("POST", "authorize")["num_requests"] > 20
    assert run.row("FLOW", "challenge round trip")["num_requests"] > 5
    provider = run.summary["token_provider"]
    assert provider["processes"] == 2  # one token provider per worker process
    assert provider["token_calls"] == run.row("POST", "token")["num_requests"] <= 6


def test_processes_flag(sandbox_process: SandboxProcess, tmp_path: Path) -> None:
    port = free_port()
    run = locust(AUTHORIZE_FILE, ["FastAuthorizeUser"], host=sandbox_process.base_url,
                 out=tmp_path, users=4, run_time="4s",
                 extra=["--processes", "2", "--master-bind-host", "127.0.0.1",
                        "--master-bind-port", str(port), "--master-port", str(port)])
    run.assert_clean()
    assert run.row("POST", "authorize")["num_requests"] > 20
    assert run.summary["token_provider"]["processes"] == 2
