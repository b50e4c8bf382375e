"""``authzkit loadtest`` (or ``capacity``) running beside the kernel as its child process,
its live figures, its stop.

The child is the command itself (``python -m authzkit loadtest …``), so a notebook's run is
the terminal's run: the same checks, sandbox, preflight, locust child, files and report.
It runs in a session of its own, so the kernel's interrupt does not reach it behind this
module's back: :meth:`Child.stop` sends it SIGINT, which the command handles as Ctrl-C
(:mod:`authzkit.loadtest.interrupt`): locust stops, the sandbox stops and the partial report
is written.
"""

from __future__ import annotations

import atexit
import json
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authzkit.wire.errors import ConfigError

INTERVAL_S = 1.0  # the child rewrites live.json each second
# Beyond the run time: the sandbox's and locust's start, the stop, the report.
GRACE_S = 150.0
CONFIG_EXIT = 2  # the command's exit code for a refused configuration


@dataclass(frozen=True)
class Figures:
    """One look at a run in progress: what the live view shows."""

    elapsed_s: float | None  # seconds of load so far (None before the load starts)
    requests: int  # answered so far
    failures: int
    rps: float | None  # requests per second since the previous look
    p50_us: float | None  # of the last whole seconds (µs histograms)
    p99_us: float | None


def default_out(scenario: str, cwd: Path | None = None) -> Path:
    """``loadtest-out/<scenario>-<time>`` as the command names it, made now (never shared)."""
    from authzkit.loadtest.run_directory import DEFAULT_ROOT, new_directory

    return new_directory(scenario, (cwd or Path.cwd()) / DEFAULT_ROOT)


def child_environment(sandbox: bool, env: dict[str, str] | None) -> dict[str, str]:
    """The command's environment: the kernel's (``sandbox``: without ``AUTHZKIT_*``, so the
    command starts a sandbox of its own), then ``env``."""
    from authzkit.wire.children import child_env

    base = child_env()
    if sandbox:
        base = {k: v for k, v in base.items() if not k.startswith("AUTHZKIT_")}
    return {**base, **(env or {}), "PYTHONUNBUFFERED": "1"}


_RUNNING: weakref.WeakSet[Child] = weakref.WeakSet()
EXIT_WAIT_S = 20.0  # at the kernel's exit, for each run it leaves going to write its report


@atexit.register
def _stop_at_exit() -> None:
    """A kernel shut down (or a script ending) while a run goes: the run is stopped as Stop
    does, since its own session keeps it out of the kernel's process group."""
    for child in list(_RUNNING):
        child.stop()
    for child in list(_RUNNING):
        child.wait(EXIT_WAIT_S)


class Child:
    """A running ``authzkit loadtest``: its process, its run directory, its output."""

    def __init__(
        self,
        argv: list[str],
        out: Path,
        env: dict[str, str],
        seconds: float,
        command: str = "loadtest",
    ) -> None:
        self.out = out
        self.seconds = seconds
        self.stopped = False
        # the command's own lines (it prints no secret), closed by close()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "authzkit", command, f"--out={out}", *argv],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self.started = time.monotonic()
        _RUNNING.add(self)
        self._last: tuple[float, int, float | None] | None = None
        self._read = 0  # how much of the output new_output() has handed out

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """End the run cleanly (SIGINT, the command's Ctrl-C): a partial report follows."""
        if self.running and not self.stopped:
            self.stopped = True
            self.process.send_signal(signal.SIGINT)

    def wait(self, timeout: float | None = None) -> int:
        """The command's exit code, once it has ended (killed past its deadline)."""
        limit = self.seconds + GRACE_S if timeout is None else timeout
        try:
            return self.process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=30)

    def output(self) -> str:
        """What the command printed so far (its start line, its summary, its errors)."""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode("utf-8", errors="replace")

    def new_output(self) -> str:
        """What the command printed since the last call (whole lines only)."""
        text = self.output()[self._read :]
        whole = text[: text.rfind("\n") + 1]
        self._read += len(whole)
        return whole

    def refused(self, marker: str = "run.json") -> ConfigError | None:
        """The command's refusal (exit 2 before it wrote ``marker``), as an error to raise."""
        if self.process.returncode != CONFIG_EXIT or (self.out / marker).exists():
            return None
        lines = [line for line in self.output().splitlines() if line.strip()]
        return ConfigError(lines[-1] if lines else "the command refused the run (exit 2)")

    def figures(self) -> Figures:
        """The run so far: live.json's µs figures and locust's failure count."""
        live = _read_live(self.out)
        totals = _locust_totals(self.out)
        count = int(live.get("count", 0))
        elapsed = float(live["run_s"]) if "run_s" in live else None
        rps = self._rps(elapsed, count)
        recent = bool(live.get("recent_count"))
        return Figures(
            elapsed_s=elapsed,
            requests=max(count, int(totals.get("requests", 0))),
            failures=int(totals.get("failures", 0)),
            rps=rps,
            p50_us=float(live["recent_p50_us"]) if recent and "recent_p50_us" in live else None,
            p99_us=float(live["recent_p99_us"]) if recent else None,
        )

    def _rps(self, elapsed: float | None, count: int) -> float | None:
        """Requests per second since the previous look (since the start at the first);
        the previous figure while live.json has not moved on."""
        if elapsed is None:
            return None
        if self._last is not None and elapsed <= self._last[0]:
            return self._last[2]
        rps: float | None
        if self._last is not None:
            rps = (count - self._last[1]) / (elapsed - self._last[0])
        else:
            rps = count / elapsed if elapsed > 0 else None
        self._last = (elapsed, count, rps)
        return rps

    def close(self) -> None:
        self._log.close()


def _read_live(out: Path) -> dict[str, Any]:
    from authzkit.loadtest.record.summary import LIVE_FILE

    try:
        found = json.loads((out / LIVE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _locust_totals(out: Path) -> dict[str, float]:
    from authzkit.loadtest.child import live_totals

    return live_totals(out) or {}


def signal_name(code: int | None) -> str | None:
    """``SIGINT`` for exit 130: what ended a run stopped by a signal."""
    if code is None or code <= 128:
        return None
    try:
        return signal.Signals(code - 128).name
    except ValueError:
        return None


__all__ = ["Child", "Figures", "child_environment", "default_out", "signal_name"]
