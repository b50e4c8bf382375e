"""``authzkit capacity`` end to end, in a child process as a user runs it, against the sandbox
it starts with a known capacity: ``--concurrency 1 --latency-ms 100`` serves at most 10
calls per second. At 8/s (80 %) every call is answered in about 100 ms; at 16/s the line
grows by 6 calls every second, so within the judged part of a step calls wait far past
400 ms whatever the machine's speed (a slower machine only waits longer). The search
probes 8/s, then 16/s, and stops (``--precision 1``: 16 is within twice 8).

Then Ctrl-C in the middle of a search: nothing left running, the steps judged so far kept.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from authzkit.wire.children import child_env

from support.processes import processes_naming

pytestmark = pytest.mark.slow

WAIT_S = 120.0  # a deadline for the child, never an assertion on time
KNOWN = ["--concurrency", "1", "--latency-ms", "100", "--max-p99-ms", "400"]


def capacity(out: Path, *args: str, temp: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "authzkit", "capacity", "--out", str(out), *KNOWN, *args],
        env=child_env({"TMPDIR": str(temp)}),
        cwd=out.parent,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_the_search_finds_the_capacity_and_says_what_limited_it(tmp_path: Path) -> None:
    temp, out = tmp_path / "tmp", tmp_path / "run"
    temp.mkdir()
    process = capacity(
        out,
        *("--start-rate", "8", "--step-time", "1.5", "--warm-up", "0.3", "--precision", "1"),
        temp=temp,
    )
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stdout + stderr
    lines = stdout.strip().splitlines()
    assert lines[-3] == "capacity: 8/s (SLO p99 <= 400 ms, failure ratio <= 0.01)", stdout
    assert lines[-2].startswith("limited by: service: the SLO broke at 16/s: p99 "), stdout
    assert lines[-1] == f"report: {out / 'report.html'}"
    document = json.loads((out / "capacity.json").read_text())
    assert (document["capacity_per_s"], document["limited_by"]) == (8, "service")
    steps = document["steps"]
    assert [(s["offered_per_s"], s["verdict"]) for s in steps] == [(8, "held"), (16, "broke")]
    assert steps[1]["p99_ms"] > 400 and "> --max-p99-ms 400" in steps[1]["why"]
    assert steps[0]["requests"] > 0 and steps[0]["failures"] == 0
    histograms = json.loads((out / "capacity_histograms.json").read_text())
    assert sorted(histograms) == ["0", "1"]
    page = (out / "report.html").read_text()
    assert "How much can it take?" in page and "data:image/png;base64" in page
    assert not (out / "capacity_control.json").exists()
    assert list(temp.iterdir()) == [] and processes_naming(str(out)) == []
    meta = json.loads((out / "run.json").read_text())  # its keys mean what a load test's do
    assert (meta["command"], meta["user_class"]) == ("capacity", "OpenAuthorizeUser")
    assert "--capacity-dir" in meta["locust_command"]

    again = subprocess.run(
        [sys.executable, "-m", "authzkit", "report", str(out)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert "capacity: 8/s (SLO p99 <= 400 ms, failure ratio <= 0.01)" in again.stdout


def test_an_interrupted_search_keeps_the_steps_so_far_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    temp, out = tmp_path / "tmp", tmp_path / "run"
    temp.mkdir()
    process = capacity(out, "--start-rate", "2", "--step-time", "1", temp=temp)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (out / "capacity.json").exists():  # written once the first step is judged
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no step was ever judged"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stdout + stderr
    assert "interrupted by SIGINT" in stderr and "Traceback" not in stderr
    document = json.loads((out / "capacity.json").read_text())
    assert document["interrupted"] == "SIGINT" and document["complete"] is False
    assert document["steps"] and document["steps"][0]["offered_per_s"] == 2
    assert list(temp.iterdir()) == [] and processes_naming(str(out)) == []
