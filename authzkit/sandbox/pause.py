"""The stop-the-world pause of the sandbox's fault injection (``--pause-every``/``--pause-ms``).

No response of a SPEC endpoint goes out during the first ``pause_ms`` of every
``pause_every``-second period since the sandbox started; responses held during a pause go
out when it ends — the hiccup against which an open-model load test's latency is checked.
:class:`~authzkit.sandbox.injector.FaultInjector` decides which responses pass through here.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from authzkit.wire.clock import Clock
from authzkit.wire.locks import LazilyLocked

if TYPE_CHECKING:
    from authzkit.sandbox.counts import FaultCounts

HELD_KEPT = 10_000
PAUSE_POLL_SECONDS = 0.02
Send = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class HeldResponse:
    """A response the pause held: ready at ``held_at``, sent at ``released_at`` (not before
    ``pause_end`` unless the sandbox stopped first), on the sandbox's clock."""

    endpoint: str
    held_at: float
    pause_end: float
    released_at: float


class PauseGate(LazilyLocked):
    """The stop-the-world schedule: no response goes out during the first ``pause_ms`` of
    every ``every``-second period since ``started_at``; those held go out at its end.

    One waiter task per pause watches the clock and opens that pause's gate, so a thousand
    held responses cost one timer, and a test moving a ManualClock releases them all.
    :meth:`end` (the sandbox stopping) releases everything and holds nothing more,
    so a stop never leaves a client waiting out a pause or cancels a held response.
    """

    def __init__(
        self, every: float, pause_ms: float, *, clock: Clock, started_at: float, counts: FaultCounts
    ) -> None:
        self.every = every
        self.length = pause_ms / 1000.0
        self.started_at = started_at
        self._clock = clock
        self._counts = counts
        self._gates: dict[int, asyncio.Event] = {}  # touched on the serving loop only
        self._waiters: set[asyncio.Task[None]] = set()
        self._held: deque[HeldResponse] = deque(maxlen=HELD_KEPT)
        self._ended = False

    def pause_at(self, now: float) -> tuple[int, float] | None:
        """``(period index, pause end)`` when ``now`` falls in a pause, else None."""
        period = math.floor((now - self.started_at) / self.every)
        end = self.started_at + period * self.every + self.length
        return (period, end) if period >= 0 and now < end else None

    def wrap(self, send: Send, endpoint: str) -> Send:
        """``send`` that holds the response's first message while a pause is on."""

        async def paused_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                await self.hold(endpoint)
            await send(message)

        return paused_send

    async def hold(self, endpoint: str) -> None:
        """Return at once outside a pause, else when the current pause ends."""
        now = self._clock()
        pause = None if self._ended else self.pause_at(now)
        if pause is None:
            return
        period, end = pause
        gate = self._gates.get(period)
        if gate is None:
            gate = self._gates[period] = asyncio.Event()
            self._counts.add("pauses")
            waiter = asyncio.create_task(self._open_at(period, end, gate))
            self._waiters.add(waiter)  # a strong reference until it is done
            waiter.add_done_callback(self._waiters.discard)
        self._counts.add(f"held:{endpoint}")
        await gate.wait()
        with self._lock:
            self._held.append(HeldResponse(endpoint, now, end, self._clock()))

    async def _open_at(self, period: int, end: float, gate: asyncio.Event) -> None:
        while not self._ended and (left := end - self._clock()) > 0:
            await asyncio.sleep(min(left, PAUSE_POLL_SECONDS))
        self._gates.pop(period, None)
        gate.set()

    def end(self) -> None:
        """Release every held response (within ``PAUSE_POLL_SECONDS``) and hold no more;
        a plain flag, so the sandbox's ``stop()`` may call it from any thread."""
        self._ended = True

    def held_responses(self) -> list[HeldResponse]:
        """The responses held so far, oldest first (the newest ``HELD_KEPT``)."""
        with self._lock:
            return list(self._held)


__all__ = ["HELD_KEPT", "PAUSE_POLL_SECONDS", "HeldResponse", "PauseGate"]
