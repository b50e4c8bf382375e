"""An interrupted ``authzkit loadtest`` (Ctrl-C's SIGINT, or SIGTERM) stops its sandbox and
locust, removes its temporary folders, keeps the run directory and writes a partial
report saying it was interrupted. A real run in a child process: the only way to see what
a user sees after ``kill``."""

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

WAIT_S = 90.0  # a deadline for the child to get going, never an assertion on time


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert process.poll() is None, "the run ended before it was interrupted"
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.2)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_cleans_up_and_reports(tmp_path: Path, sig: signal.Signals) -> None:
    temp, out = tmp_path / "tmp", tmp_path / "run"
    temp.mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "authzkit",
            "loadtest",
            "-u",
            "2",
            "-t",
            "10m",
            "--quiet",
            "--wait-time",
            "0.05",
            "--out",
            str(out),
        ],
        env=child_env({"TMPDIR": str(temp)}),
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # live.json: locust's test has started (its signal handlers are in place); its
        # CSV files exist earlier, when a SIGTERM still ends it before it writes anything
        _wait_for(out / "live.json", process)
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + sig, stdout + stderr
    assert f"interrupted by {sig.name}" in stderr and "Traceback" not in stderr
    assert list(temp.iterdir()) == []  # authzkit-sandbox-*, authzkit-loadtest-* removed
    assert processes_naming(str(tmp_path)) == []  # neither locust nor the sandbox lives on
    meta = json.loads((out / "run.json").read_text())
    assert meta["interrupted"] == sig.name
    page = (out / "report.html").read_text()
    assert f"Interrupted by {sig.name}" in page
    assert (out / "locustfile.py").exists() and (out / "locust.log").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["drift"]["seconds"] >= 0  # the drift so far (judged once two windows fit)
    assert {p["role"] for p in summary["resources"]["processes"]} == {"locust", "sandbox"}
