"""A capacity search inside the Locust run: the steps passed on, followed, tallied, merged.

The master reads the search's control file and tells every process each step; each sends
its closed steps' tallies back, merged into the steps file. Imports gevent, not Locust
(docs/internals.md, "A capacity search inside the run").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent

from authzkit.loadtest.record.schedule import Step, SteppedRate
from authzkit.loadtest.record.steps import CONTROL_FILE, STEPS_FILE, StepMerger, StepRecorder

STEP_MESSAGE = "authzkit_step"  # master → processes: follow this step (or stop)
PART_MESSAGE = "authzkit_step_part"  # process → master: its tally of a closed step
READY_MESSAGE = "authzkit_step_ready"  # process → master: waiting for its first step
CONTROL_POLL_S = 0.05
REPORT_EVERY_S = 0.02


class Searching:
    """One process's part of a capacity search: the steps it follows (its share of each
    of ``workers`` processes', at ``phase``), its tallies, and (master or lone process) the
    merge of every process's tallies, written into ``folder``."""

    def __init__(
        self,
        workers: int,
        *,
        phase: int = 0,
        arrivals: str = "constant",
        seed: str | None = None,
        folder: str | Path = ".",
    ) -> None:
        self.rate = SteppedRate(workers, phase=phase, arrivals=arrivals, seed=seed)
        self.recorder = StepRecorder(self.rate)
        self.merger = StepMerger(workers)
        self.folder = Path(folder)

    def write(self, event: dict[str, Any]) -> None:
        """One line of the steps file."""
        with (self.folder / STEPS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")


class SearchHub:
    """The process's :class:`Searching` (built by ``build`` on first use, in a run given
    ``--capacity-dir``) and the handlers of its messages."""

    def __init__(self, build: Callable[[Any], Searching]) -> None:
        self._build = build
        self.now: Searching | None = None

    def of(self, environment: Any) -> Searching | None:
        """This process's part of the search, or None outside a capacity run."""
        options = environment.parsed_options
        if not getattr(options, "capacity_dir", None):
            return None
        if self.now is None:
            self.now = self._build(environment)
        return self.now

    def report(self, environment: Any, in_flight: Callable[[], int]) -> None:
        """A sending process: say when it waits for its first step, then send each closed
        step's tally to the master (to itself, alone)."""
        searching = self.of(environment)
        if searching is None:
            return
        runner = environment.runner
        ready = False
        while True:
            if not ready and searching.rate.waiting:
                ready = True
                runner.send_message(READY_MESSAGE, {})
            for part in searching.recorder.closed(time.perf_counter(), in_flight()):
                runner.send_message(PART_MESSAGE, part)
            gevent.sleep(REPORT_EVERY_S)

    def on_step(self, environment: Any, msg: Any, **_: Any) -> None:
        searching = self.of(environment)
        if searching is None:
            return
        if (msg.data or {}).get("stop"):
            searching.rate.stop()
        else:
            searching.rate.announce(Step.of(msg.data))

    def on_part(self, environment: Any, msg: Any, **_: Any) -> None:
        searching = self.of(environment)
        merged = None if searching is None else searching.merger.add(msg.data)
        if searching is not None and merged is not None:
            searching.write({"event": "step", **merged})

    def on_ready(self, environment: Any, msg: Any, **_: Any) -> None:
        searching = self.of(environment)
        if searching is not None and searching.merger.ready(str(msg.node_id)):
            searching.write({"event": "ready", "processes": searching.merger.expected})

    def follow_control(self, environment: Any) -> None:
        """The master's (or lone process's) reading of the control file: each new step to
        every process, then the stop, then the end of the run."""
        runner = environment.runner
        path = Path(environment.parsed_options.capacity_dir) / CONTROL_FILE
        told = -1
        while True:
            try:
                control = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                control = {}
            for data in control.get("steps", []):
                if int(data["index"]) > told:
                    told = int(data["index"])
                    runner.send_message(STEP_MESSAGE, data)
            if control.get("stop"):
                runner.send_message(STEP_MESSAGE, {"stop": True})
                gevent.sleep(CONTROL_POLL_S)
                gevent.spawn(runner.quit)  # as the run time's end does (process.stop_test)
                return
            gevent.sleep(CONTROL_POLL_S)


__all__ = [
    "CONTROL_POLL_S",
    "PART_MESSAGE",
    "READY_MESSAGE",
    "REPORT_EVERY_S",
    "STEP_MESSAGE",
    "SearchHub",
    "Searching",
]
