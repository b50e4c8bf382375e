"""The search's side of the one Locust run: announce each step, read back its merged tally.

Two files in the run directory (the control file written here, the steps file appended by
the master), so one channel serves every way Locust runs; nothing here imports Locust
(docs/internals.md, "Talking to the run").
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from authzkit.loadtest.child import OUTPUT_FILE
from authzkit.loadtest.record.face import CONTROL_FILE, STEPS_FILE

POLL_S = 0.05


class SearchFailed(Exception):
    """The run ended, or stopped answering, before the search did."""


class StepChannel:
    """Announce steps to the Locust run writing into ``folder`` and read their tallies."""

    def __init__(
        self,
        folder: Path,
        process: subprocess.Popen[bytes] | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> None:
        self.folder = folder
        self.process = process
        self._clock = clock
        self._sleep = sleep
        self._steps: list[dict[str, Any]] = []
        self._read = 0  # bytes of the steps file already read
        self._events: list[dict[str, Any]] = []
        self._write({"steps": [], "stop": False})
        (folder / STEPS_FILE).unlink(missing_ok=True)

    def _write(self, control: dict[str, Any]) -> None:
        from authzkit.loadtest.capacity.results import write_json

        write_json(self.folder / CONTROL_FILE, control)

    def announce(self, step: dict[str, Any]) -> None:
        """Every process follows ``step`` (a :meth:`Step.message`) next."""
        self._steps.append(step)
        self._write({"steps": self._steps, "stop": False})

    def stop(self) -> None:
        """No more steps: the run ends (its processes write their results)."""
        self._write({"steps": self._steps, "stop": True})

    def _new_events(self) -> None:
        try:
            with (self.folder / STEPS_FILE).open("rb") as handle:
                handle.seek(self._read)
                data = handle.read()
        except FileNotFoundError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self._read += len(complete)
        for line in complete.decode("utf-8").splitlines():
            if line.strip():
                self._events.append(json.loads(line))

    def wait(self, kind: str, index: int | None, seconds: float, what: str) -> dict[str, Any]:
        """The event ``kind`` (of step ``index``), within ``seconds``; a
        :class:`SearchFailed` naming ``what`` was awaited when Locust exits or time is up."""
        deadline = self._clock() + seconds
        while True:
            self._new_events()
            for event in self._events:
                if event.get("event") == kind and (index is None or event.get("index") == index):
                    self._events.remove(event)
                    return event
            if self.process is not None and self.process.poll() is not None:
                said = _error_line(self.folder / OUTPUT_FILE)
                raise SearchFailed(
                    f"locust exited (code {self.process.returncode}) while the search waited "
                    f"for {what}{f': {said}' if said else ''}: see {OUTPUT_FILE} and "
                    f"locust.log in {self.folder}"
                )
            if self._clock() > deadline:
                raise SearchFailed(
                    f"no {what} after {seconds:g} s: see locust.log in {self.folder}"
                )
            self._sleep(POLL_S)

    def close(self) -> None:
        """Remove the control file (the steps it announced are in capacity.json)."""
        (self.folder / CONTROL_FILE).unlink(missing_ok=True)


def _error_line(path: Path) -> str | None:
    """Locust's last ``error:`` line in ``path`` (``locust: error: unrecognized arguments:
    …`` when it refused its command line), or None: only that line, never its other output."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    errors = [line.strip() for line in lines if "error:" in line]
    return errors[-1] if errors else None


__all__ = ["POLL_S", "SearchFailed", "StepChannel"]
