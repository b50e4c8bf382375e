"""Ctrl-C as a terminal sends it: SIGINT to the whole process group, the command's locust and
sandbox children included. Locust stops sending first, the sandbox goes after it: no call
meets a stopped sandbox, nothing is left running, the command exits 130.

(Signalling the command's process alone, as ``tests/loadtest/test_interrupt.py`` does, never
showed this: the sandbox child died with the terminal's signal while locust went on sending
to it for its whole ``--stop-timeout``.)"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from authzkit.wire.children import child_env

pytestmark = pytest.mark.slow

WAIT_S = 90.0  # a deadline for the child to get going, never an assertion on time


def test_ctrl_c_to_the_process_group_stops_locust_before_the_sandbox(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run = ("loadtest", "--rate", "40", "-t", "10m", "--quiet", "--out", str(out))
    process = subprocess.Popen(
        [sys.executable, "-m", "authzkit", *run],
        env=child_env(),
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not _answered(out):  # the load has begun: calls were answered
            assert process.poll() is None, "the run ended before it was interrupted"
            assert time.monotonic() < deadline, "no call was answered"
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stdout + stderr
    assert "interrupted by SIGINT" in stderr and "Traceback" not in stderr
    with (out / "locust_failures.csv").open() as failures:
        assert list(csv.DictReader(failures)) == []  # no call met a stopped sandbox
    log = (out / "locust.log").read_text()
    assert "unexpected state" not in log  # users stopped, not killed mid-call
    page = (out / "report.html").read_text()  # written at once: the plots are left to
    assert f"authzkit report {out}</code> draws them" in page  # `authzkit report`
    assert not list(out.glob("*.png"))
    assert _processes_naming(str(tmp_path)) == []


def _answered(out: Path) -> bool:
    """Whether the run's live figures count an answered call."""
    try:
        live = json.loads((out / "live.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(live.get("count"))


def _processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (the run's paths)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in words:
            found.append(words)
    return found
