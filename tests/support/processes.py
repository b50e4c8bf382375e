"""A load run as a terminal starts it, and what a run leaves running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from authzkit.wire.children import child_env

WAIT_S = 90.0  # a deadline for a child to get going, never an assertion on time


def start_run(out: Path, *args: str, cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    """``authzkit loadtest ARGS --out OUT`` in its own session (a terminal's foreground job:
    ``os.killpg`` reaches it and its children), once its load has begun: a call answered
    (its ``live.json`` counts one)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "authzkit", "loadtest", *args, "--out", str(out)],
        env=child_env(),
        cwd=cwd,
        text=True,
        start_new_session=True,
        **popen,
    )
    deadline = time.monotonic() + WAIT_S
    while not _answered(out):
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)  # its children too
            raise AssertionError(f"the run in {out} never answered a call")
        time.sleep(0.2)
    return process


def _answered(out: Path) -> bool:
    try:
        live = json.loads((out / "live.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(live.get("count"))


def processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (a run's paths)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in words:
            found.append(words)
    return found


__all__ = ["WAIT_S", "processes_naming", "start_run"]
