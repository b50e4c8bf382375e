"""The processes of a side-by-side generator comparison: each pinned to its own core, the
CPU of a whole process tree read from ``/proc``, and the sandbox that records arrivals
(``peer_sandbox.py``) started and stopped.

Linux only (``/proc``, ``os.sched_setaffinity``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authzkit.wire.children import child_env

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
LAUNCHER = Path(__file__).with_name("peer_sandbox.py")


def cores() -> tuple[int | None, int | None]:
    """(the sandbox's core, the generators' core): the first two this process may use;
    (None, None) on a machine with one (then nothing is pinned)."""
    allowed = sorted(os.sched_getaffinity(0))
    return (allowed[0], allowed[1]) if len(allowed) >= 2 else (None, None)


def pinned_to(core: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that pins the child (and so every process it starts) to ``core``."""
    if core is None:
        return None
    return lambda: os.sched_setaffinity(0, {core})


def _stat_fields(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone meanwhile
        return None
    return text[text.rindex(")") + 2 :].split()


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of ``root`` and every process descended from it, alive now (and
    of those already reaped, which the kernel adds to their parent's children time)."""
    fields = {pid: f for pid in os.listdir("/proc") if pid.isdigit() and (f := _stat_fields(pid))}
    children: dict[int, list[int]] = {}
    for pid, found in fields.items():
        children.setdefault(int(found[1]), []).append(int(pid))
    total, todo = 0, [root]
    while todo:
        process = todo.pop()
        f = fields.get(str(process))
        if f is not None:  # utime, stime, cutime, cstime
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        todo += children.get(process, [])
    return total / TICKS_PER_SECOND


@dataclass
class RecordingSandbox:
    """``authzkit sandbox`` pinned to a core, keeping every authorize arrival
    (``peer_sandbox.py``); :meth:`stop` ends it and reads them."""

    process: subprocess.Popen[bytes]
    base_url: str
    arrivals_file: Path

    @classmethod
    def start(cls, folder: Path, options: Sequence[str], core: int | None) -> RecordingSandbox:
        folder.mkdir(parents=True, exist_ok=True)
        ready = folder / "ready.json"
        arrivals = folder / "arrivals.json"
        command = [sys.executable, str(LAUNCHER), str(arrivals), "--port", "0"]
        command += ["--ready-file", str(ready), *options]
        with (folder / "sandbox.log").open("wb") as log:
            process = subprocess.Popen(
                command,
                env=child_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=pinned_to(core),
            )
        deadline = time.monotonic() + 90
        while not ready.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                log_text = (folder / "sandbox.log").read_text(errors="replace").strip()
                raise RuntimeError(f"the sandbox did not start: {log_text[-400:]}")
            time.sleep(0.05)
        return cls(process, json.loads(ready.read_text())["base_url"], arrivals)

    def stop(self) -> dict[str, list[int]]:
        """Stop it; the arrival and answer times (``time.monotonic_ns``) of every
        authorize request it served."""
        stop_child(self.process, signal.SIGTERM, "the sandbox")
        if not self.arrivals_file.exists():
            raise RuntimeError(f"the sandbox wrote no {self.arrivals_file.name}")
        recorded: dict[str, list[int]] = json.loads(self.arrivals_file.read_text())
        return recorded

    def kill(self) -> None:
        kill_child(self.process)


def stop_child(process: subprocess.Popen[bytes], how: int, name: str) -> None:
    """Send ``process`` the signal ``how`` and wait for it to end; killed, and a
    ``RuntimeError`` naming it, when it has not within 30 s."""
    process.send_signal(how)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise RuntimeError(f"{name} did not stop within 30 s") from None


def kill_child(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` if it still runs, and reap it."""
    if process.poll() is None:
        process.kill()
        process.wait()


def served_count(session: Any, base_url: str) -> int:
    """Authorize requests the sandbox has answered so far (``/sandbox/v1/service-time``)."""
    answer = session.get(f"{base_url}/sandbox/v1/service-time", timeout=10)
    answer.raise_for_status()
    return int(answer.json()["count"])


__all__ = [
    "RecordingSandbox",
    "cores",
    "kill_child",
    "pinned_to",
    "served_count",
    "stop_child",
    "tree_cpu_seconds",
]
