"""Issue 35's proof end to end, two short runs side by side: a sandbox that slows by 100 ms
a second is caught by ``--max-drift`` (exit 1, the problem line naming drift, both windows
and their p99) over ``--processes 2`` and the open model, and a steady sandbox passes a
generous ``--max-drift`` in a closed loop; each run's ``summary.json`` has a resource series
per process it started.

What the design guarantees, whatever the machine's speed: the degrading sandbox's delay
grows by 100 ms with every second after it started, the two windows are seconds apart, so
the last window's p99 exceeds the first's by about 90 ms for each second between them, far
beyond 1.05 times unless the first window alone stalled; the steady sandbox answers in
50 ms, so a ratio of 20 needs a one-second stall in the last window alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from authzkit.wire.children import child_env

pytestmark = pytest.mark.slow

WINDOWS = ("--drift-window", "2", "--warm-up", "1", "--no-report")
DEGRADING = ("-t", "10s", "--rate", "20", "--processes", "2", "--degrade-ms-per-min", "6000")
STEADY = ("-t", "8s", "-u", "2", "--latency-ms", "50")


def start(out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "authzkit", "loadtest", "--out", str(out), *WINDOWS, *args],
        cwd=out.parent,
        env=child_env(None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finished(process: subprocess.Popen[str], out: Path) -> tuple[int, str, dict[str, Any]]:
    output, _ = process.communicate(timeout=150)
    return process.returncode, output, json.loads((out / "summary.json").read_text())


def roles(summary: dict[str, Any]) -> set[str]:
    """The processes sampled, each with one sample per series at least, all series alike."""
    found = set()
    for process in summary["resources"]["processes"]:
        lengths = {len(process[name]) for name in ("seconds", "rss_bytes", "cpu_percent")}
        lengths |= {len(process["fds"]), len(process["threads"])}
        assert len(lengths) == 1 and lengths.pop() >= 1, process
        assert process["pid"] > 0 and process["rss_bytes"][0] > 0
        found.add(process["role"])
    return found


def test_a_degrading_sandbox_is_caught_and_a_steady_one_passes(tmp_path: Path) -> None:
    degrading, steady = tmp_path / "degrading", tmp_path / "steady"
    running = [
        start(degrading, *DEGRADING, "--max-drift", "1.05"),
        start(steady, *STEADY, "--max-drift", "20", "--max-failure-drift", "1"),
    ]
    code, output, summary = finished(running[0], degrading)
    steady_code, steady_output, steady_summary = finished(running[1], steady)

    assert code == 1, output
    drift = summary["drift"]
    assert drift["judged"] and not drift["passed"] and drift["ratio"] > 1.05, drift
    first, last = drift["first"], drift["last"]
    # 100 ms more a second of arrival; a second of completion is at most 1.1 of arrival
    assert last["p99"] - first["p99"] >= 80_000 * (last["from_s"] - first["to_s"]), drift
    [problem] = [line for line in output.splitlines() if line.startswith("threshold: drift:")]
    assert f"s {first['from_s']}-{first['to_s']}" in problem
    assert f"s {last['from_s']}-{last['to_s']}" in problem
    assert summary["token_provider"]["processes"] == 2  # both workers' seconds merged
    assert {"master", "worker 1", "worker 2", "sandbox"} <= roles(summary)

    assert steady_code == 0, steady_output
    steady_drift = steady_summary["drift"]
    assert steady_drift["judged"] and steady_drift["passed"], steady_drift
    assert steady_drift["ratio"] < 20 and steady_drift["failure_drift_pp"] <= 1
    assert roles(steady_summary) == {"locust", "sandbox"}
    assert not steady_summary["resources"]["generator"]["steady_growth"]
