"""Stretches with no start due: where a Locust process's own background work belongs.

Why: a start due while another greenlet runs waits for it, and once a second the live
figures cost about a millisecond. A step here waits until the schedule has just blocked
for long enough, or its patience ran out, or at once without a schedule
(docs/internals.md, "Background steps wait for a quiet stretch").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

STEP_S = 0.001  # the room a background step asks for: its cost, about, and some spare
PATIENCE_S = 0.25  # the longest it waits for that room: it runs then anyway


class QuietStretches:
    """A schedule tells :meth:`open` when it blocks until ``until``; a background step
    calls :meth:`wait` first. Not locked: Locust's users and steps are greenlets."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        event: Callable[[], Any] | None = None,
    ) -> None:
        self._clock = clock
        self._event = event
        self._schedules = 0  # schedules running in this process
        self._next: Any = None  # the event the waiting steps wait on (None: nobody waits)
        self._until = float("-inf")  # the open stretch ends here

    def begin(self) -> None:
        """A schedule starts: steps wait for its stretches from now on."""
        self._schedules += 1
        self._until = float("-inf")

    def end(self) -> None:
        """A schedule ended: with none left, waiting steps go on at once."""
        self._schedules -= 1
        if not self._schedules:
            self._release(float("inf"))

    def open(self, until: float) -> None:
        """The schedule blocks until ``until`` (on the clock): nothing of its is due before.
        With several schedules in the process one's stretch is not the others': ignored."""
        if self._next is not None and self._schedules == 1:
            self._release(until)

    def wait(self, room_s: float = STEP_S, patience_s: float = PATIENCE_S) -> None:
        """Return inside a stretch with at least ``room_s`` left, or after ``patience_s``,
        or at once when no schedule runs."""
        clock = self._clock
        deadline = clock() + patience_s
        while self._schedules:
            now = clock()
            if self._until - now >= room_s or now >= deadline:
                return
            if self._next is None:
                self._next = self._new_event()
            self._next.wait(deadline - now)

    def _release(self, until: float) -> None:
        self._until = until
        waiting, self._next = self._next, None
        if waiting is not None:
            waiting.set()

    def _new_event(self) -> Any:
        if self._event is None:
            from gevent.event import Event

            self._event = Event
        return self._event()


QUIET = QuietStretches()  # the process's: its schedules open it, its background steps wait

__all__ = ["PATIENCE_S", "QUIET", "STEP_S", "QuietStretches"]
