"""Locust's distributed mode on loopback: a master with two worker processes, and --processes.

Each runs on one dialect (``dialect_service``, the other dialect's users are the same classes):
the master and its workers on the published one, where the master alone is told the issuer,
``--client-auth private_key_jwt`` and ``--client-key-file``, and each worker's own token
provider uses them (custom arguments reach the workers with the spawn message); ``--processes``
on the draft's token path.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env, free_port, stop_process

from support.loadtest import (
    AUTHORIZE_FILE,
    DISCOVERY_ROW,
    PACED,
    LocustRun,
    Service,
    assert_every_call_heard,
    authorize_calls,
    locust,
    read_results,
)

pytestmark = pytest.mark.slow

# Minute-long tokens: these runs are about distribution, not about refresh timing.
TOKEN_TTL = 60


def assert_tokens_per_process(run: LocustRun, dialect_service: Service, before: int) -> None:
    """One token provider per worker process: one first token each, never one per user
    (a token outliving the run's first seconds is refreshed, once per process, and counted
    as a refresh), from the dialect's own token endpoint (the published one discovered once
    by each worker that asked). A worker whose users had not called yet when the run ended
    (a busy machine) asked for none: 1 or 2 first tokens, whatever the speed."""
    provider = run.summary["token_provider"]
    assert provider["processes"] == 2
    issued = dialect_service.process.admin().stats()["tokens_issued"] - before
    assert provider["token_calls"] == run.row("POST", "token")["num_requests"] == issued
    assert 1 <= issued - provider["refreshes"] <= 2, provider
    if dialect_service.dialect == "published":
        assert (
            issued - provider["refreshes"] <= run.row(*DISCOVERY_ROW)["num_requests"] <= 2
        )  # once per worker
    else:
        assert DISCOVERY_ROW not in run.rows


@pytest.mark.parametrize("dialect_service", ["published"], indirect=True)
def test_master_with_two_workers(dialect_service: Service, tmp_path: Path) -> None:
    before = dialect_service.process.admin().stats()["tokens_issued"]
    calls_before = authorize_calls(dialect_service.process)
    port = free_port()
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(AUTHORIZE_FILE),
                "--worker",
                "--master-host",
                "127.0.0.1",
                "--master-port",
                str(port),
            ],
            env=child_env(),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    try:
        master = subprocess.run(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(AUTHORIZE_FILE),
                "--master",
                "--expect-workers",
                "2",
                "--expect-workers-max-wait",
                "30",
                "--master-bind-host",
                "127.0.0.1",
                "--master-bind-port",
                str(port),
                "--headless",
                "-u",
                "6",
                "-r",
                "6",
                "-t",
                "5s",  # long enough for a busy machine's workers to start; paced, so cheap
                "--stop-timeout",
                "5",
                "--host",
                dialect_service.process.base_url,
                "--json-file",
                str(tmp_path / "stats"),
                "--summary-file",
                str(tmp_path / "summary.json"),
                # custom arguments reach the workers with the spawn message
                "--wait-time",
                PACED,
                "--max-failure-ratio",
                "0",
                *dialect_service.options,
                "AuthorizeUser",
                "FastChallengeUser",
            ],
            env=child_env(),
            cwd=tmp_path,
            capture_output=True,
            timeout=90,
            check=False,
        )
        codes = [worker.wait(timeout=30) for worker in workers]
    finally:
        for worker in workers:
            stop_process(worker)
    run = read_results(tmp_path, master.returncode, master.stderr.decode(errors="replace"))
    run.assert_clean()
    assert codes == [0, 0]
    assert_every_call_heard(run, dialect_service.process, calls_before)
    assert (
        run.row("FLOW", "challenge round trip")["num_requests"]
        == run.row("POST", "authorize:solution")["num_requests"]
    )
    assert_tokens_per_process(run, dialect_service, before)


@pytest.mark.parametrize("dialect_service", ["draft"], indirect=True)
def test_processes_flag(dialect_service: Service, tmp_path: Path) -> None:
    before = dialect_service.process.admin().stats()["tokens_issued"]
    calls_before = authorize_calls(dialect_service.process)
    port = free_port()
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=dialect_service.process.base_url,
        out=tmp_path,
        users=4,
        run_time="6s",  # a busy machine took 3 s to start both workers (CI)
        extra=[
            "--processes",
            "2",
            "--master-bind-host",
            "127.0.0.1",
            "--master-bind-port",
            str(port),
            "--master-port",
            str(port),
            *dialect_service.options,
        ],
    )
    run.assert_clean()
    assert_every_call_heard(run, dialect_service.process, calls_before)
    assert_tokens_per_process(run, dialect_service, before)


# A worker whose last stats report leaves after its master gave up waiting for it (a master
# waits for its workers' last reports a few seconds, LAST_REPORT_WAIT_S, beyond
# --stop-timeout), so the master hears the histograms message that goes right before that
# report and never the report itself.
LATE_LAST_REPORT = textwrap.dedent("""
    import gevent
    from locust import events
    from locust.runners import WorkerRunner

    from authzkit.loadtest.record.users import FastAuthorizeUser

    @events.init.add_listener
    def _late_last_report(environment, **_):
        if not isinstance(environment.runner, WorkerRunner):
            return
        stopping = []
        environment.events.test_stopping.add_listener(lambda **_: stopping.append(True))

        def late(**_):
            if stopping:
                gevent.sleep(60)  # the test stops this worker once its master is gone

        environment.events.report_to_master.add_listener(late)  # after authzkit's own
""")


def test_a_last_report_the_master_never_hears_is_missing_from_histograms_and_stats_alike(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    """The master merges a worker's histograms with the stats report they go with, never
    before it: when the report is lost, its requests are missing from both, and the summary's
    histogram counts still equal Locust's rows."""
    locustfile = tmp_path / "late_last_report.py"
    locustfile.write_text(LATE_LAST_REPORT)
    before = authorize_calls(sandbox_process)
    port = free_port()
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(locustfile),
            "--worker",
            "--master-host",
            "127.0.0.1",
            "--master-port",
            str(port),
        ],
        env=child_env(),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        master = subprocess.run(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(locustfile),
                "--master",
                "--expect-workers",
                "1",
                "--expect-workers-max-wait",
                "30",
                "--master-bind-host",
                "127.0.0.1",
                "--master-bind-port",
                str(port),
                "--headless",
                "-u",
                "2",
                "-r",
                "2",
                "-t",
                "4s",
                "--host",
                sandbox_process.base_url,
                "--wait-time",
                PACED,
                "--json-file",
                str(tmp_path / "stats"),
                "--summary-file",
                str(tmp_path / "summary.json"),
                "FastAuthorizeUser",
            ],
            env=child_env(),
            cwd=tmp_path,
            capture_output=True,
            timeout=90,
            check=False,
        )
    finally:
        stop_process(worker)
    run = read_results(tmp_path, master.returncode, master.stderr.decode(errors="replace"))
    assert run.code == 0, run.output[-3000:]
    counted = run.row("POST", "authorize")["num_requests"]
    assert 0 < counted < authorize_calls(sandbox_process) - before  # the last report was lost
    assert run.summary["latency_us"]["POST authorize"]["count"] == counted
    assert run.summary["requests"] == sum(r["num_requests"] for r in run.rows.values())
