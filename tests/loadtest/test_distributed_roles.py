"""What a distributed run says when part of it fails, and what its live line counts.

In-process, with times and a clock given (no locust, no sleep): the master's live line
counts the seconds of load, not its wait for the workers; a worker lost mid-run is one
problem line naming it, when it stopped and the load it did not send; a worker whose
master went away says so in one line (the processes themselves: tests/deploy).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.loadtest.progress import progress
from authzkit.loadtest.record.summary import LIVE_FILE
from authzkit.loadtest.record.workers import MASTER_LOST, WorkerRoster
from authzkit.loadtest.roles import Role, master_lost_message

CSV = "Type,Name,Request Count,Failure Count,Requests/s,95%\n,Aggregated,{n},0,50.0,1\n"


class Clock:
    """A monotonic clock that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Locust:
    """A child that runs for ``polls`` polls, writing what the live line reads at each."""

    def __init__(self, out: Path, polls: int, run_s: list[float | None]) -> None:
        self.out, self.polls, self.run_s, self.returncode = out, polls, run_s, 0

    def poll(self) -> int | None:
        self.polls -= 1
        live = {} if not self.run_s else {"run_s": self.run_s.pop(0)}
        if live.get("run_s") is None:
            live = {}
        (self.out / "locust_stats.csv").write_text(CSV.format(n=10))
        (self.out / LIVE_FILE).write_text(json.dumps(live))
        return None if self.polls > 0 else 0


def _lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_s: list[float | None], waits: float
) -> list[str]:
    clock = Clock()
    child = Locust(tmp_path, polls=len(run_s), run_s=run_s)
    code = progress(child, tmp_path, 20.0, False, waits=waits, clock=clock, sleep=clock.sleep)  # type: ignore[arg-type]
    assert code == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines()]


def test_a_masters_live_line_counts_the_run_not_the_wait_for_its_workers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A poll every 0.2 s, a line every 2 s: 3 s waiting for the workers (no line), then
    # the load, whose own seconds the lines show (about 1 s of it at 4 s, 3 s at 6 s).
    run_s: list[float | None] = [None] * 15 + [0.2 * i for i in range(1, 26)]
    assert _lines(capsys, tmp_path, run_s, waits=120.0) == ["1s/20s", "3s/20s"]


def test_a_run_without_a_wait_counts_from_the_start_until_it_reports_its_own_seconds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _lines(capsys, tmp_path, [None] * 25, waits=0.0) == ["2s/20s", "4s/20s"]


def test_a_worker_lost_mid_run_is_one_problem_naming_it_when_and_the_load_missing() -> None:
    roster = WorkerRoster(expected=2)
    for node in ("pod-a", "pod-b"):
        roster.connected(node, 90.0)  # connected during the master's wait
    roster.started(100.0)
    for at in (103.0, 106.0, 109.0, 112.0, 115.0, 118.0, 121.0):
        roster.reported("pod-a", 300, at)
        if at <= 106.0:
            roster.reported("pod-b", 300, at)  # killed after its report at 106 s
    found = roster.summary(124.0)
    assert found["stopped_reporting"] == ["pod-b"]
    lost = next(n for n in found["nodes"] if n["node"] == "pod-b")["lost"]
    assert lost == {"stopped_at_s": 6.0, "silent_s": 18.0, "rate": 100.0, "missing_requests": 1800}
    assert found["problems"] == [
        "worker pod-b stopped reporting 6 s into the run (18 s before the end): about 1800 "
        "requests it would have sent at its 100 req/s are missing from the run"
    ]
    assert roster.summary(108.0)["problems"] == []  # both still reporting then


def test_a_worker_that_lost_its_master_says_so_in_one_line() -> None:
    line = master_lost_message(Role("worker", master_host="master", master_port=5557))
    assert line.startswith("lost the master at master:5557: no heartbeat for 15 s")
    assert line.endswith(f"exits {MASTER_LOST}") and "\n" not in line


def test_what_a_worker_runs_imports_neither_pandas_nor_matplotlib() -> None:
    """The [worker] extra (deploy/Dockerfile's worker target) has neither: a worker's
    command and its Locust process must not need them (only the master's report does)."""
    code = (
        "import sys\n"
        "import authzkit.loadtest.record.users, authzkit.loadtest.record.listeners\n"
        "import authzkit.loadtest.command, authzkit.loadtest.driver, authzkit.loadtest.roles\n"
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
