"""A service of known shape (``--service-time-us``, ``--concurrency``), and the service time
the sandbox measured it gave.

A latency measurement is only proven against a truth. The hold is a timerfd, then a spin,
since asyncio's timers are whole milliseconds (measured: docs/internals.md, "A service of
known shape").
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import heapq
import itertools
import os
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram

from authzkit.wire.locks import LazilyLocked

Send = Callable[[dict[str, Any]], Any]
SERVED_KEPT = 10_000
SPIN_NS = 100_000  # the timerfd wakes the loop this long before a deadline; then a spin
# Without a timerfd, asyncio wakes up to a millisecond (and a loop turn) late.
COARSE_LATE_NS = 1_300_000
# The histogram's range: 1 µs to 60 s at 3 significant digits, as the load test's.
LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES = 1, 60_000_000, 3
_CLOCK_MONOTONIC = 1
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _libc() -> Any:
    """The C library, when it has ``timerfd_create`` (Linux); else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "timerfd_create") else None


class DeadlineTimer:
    """Wake-ups at absolute monotonic deadlines (ns), on one timerfd of the serving loop:
    a heap of waiting futures, the fd armed at the earliest. Linux only (:meth:`create`
    answers None elsewhere, or when the fd cannot be made)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, libc: Any, fd: int) -> None:
        self._loop = loop
        self._libc = libc
        self._fd = fd
        self._heap: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._armed: int | None = None
        loop.add_reader(fd, self._fire)
        weakref.finalize(self, os.close, fd)

    @classmethod
    def create(cls, loop: asyncio.AbstractEventLoop) -> DeadlineTimer | None:
        libc = _libc()
        if libc is None:
            return None
        fd = libc.timerfd_create(_CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return None
        try:
            return cls(loop, libc, fd)
        except (OSError, NotImplementedError, RuntimeError):  # a loop without add_reader
            os.close(fd)
            return None

    def wait_until(self, deadline_ns: int) -> asyncio.Future[None]:
        """A future done at ``deadline_ns`` (``time.monotonic_ns``), or right after."""
        future: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._heap, (deadline_ns, next(self._order), future))
        if self._armed is None or deadline_ns < self._armed:
            self._arm(deadline_ns)
        return future

    def _arm(self, deadline_ns: int) -> None:
        spec = _Itimerspec()
        spec.it_value.tv_sec, spec.it_value.tv_nsec = divmod(max(deadline_ns, 1), 1_000_000_000)
        self._libc.timerfd_settime(self._fd, _TFD_TIMER_ABSTIME, ctypes.byref(spec), None)
        self._armed = deadline_ns

    def _fire(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self._fd, 8)
        now = time.monotonic_ns()
        while self._heap and self._heap[0][0] <= now:
            future = heapq.heappop(self._heap)[2]
            if not future.done():  # a cancelled wait (the client went away) is skipped
                future.set_result(None)
        self._armed = None
        if self._heap:
            self._arm(self._heap[0][0])


async def hold_until(deadline_ns: int, timer: DeadlineTimer | None) -> None:
    """Return at ``deadline_ns`` (``time.monotonic_ns``), within a loop turn, never before:
    the timer (or asyncio's coarse sleep) most of the way, then a spin that yields."""
    left = deadline_ns - time.monotonic_ns()
    if left > SPIN_NS and timer is not None:
        await timer.wait_until(deadline_ns - SPIN_NS)
    elif left > SPIN_NS + COARSE_LATE_NS:
        await asyncio.sleep((left - SPIN_NS - COARSE_LATE_NS) / 1e9)
    while time.monotonic_ns() < deadline_ns:
        await asyncio.sleep(0)


@dataclass(frozen=True)
class Served:
    """One authorize request as the sandbox served it, on ``time.monotonic_ns``: it
    arrived, entered service (after waiting in line for ``--concurrency``), and its
    response was handed to the server."""

    endpoint: str
    arrived_ns: int
    started_ns: int
    answered_ns: int

    @property
    def service_time_us(self) -> float:
        """Arrival to response: what the histogram records."""
        return (self.answered_ns - self.arrived_ns) / 1000

    @property
    def waited_us(self) -> float:
        """The wait in line before service began (0 without ``--concurrency``)."""
        return (self.started_ns - self.arrived_ns) / 1000


class ServiceRecord(LazilyLocked):
    """The measured service times: a µs histogram of every request, and the newest
    :data:`SERVED_KEPT` requests one by one (for order and overlap)."""

    def __init__(self) -> None:
        self._histogram = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
        self._served: deque[Served] = deque(maxlen=SERVED_KEPT)
        self.in_service = 0
        self.peak_in_service = 0
        self.waited = 0

    def add(self, served: Served, *, waited: bool = False) -> None:
        """Count one request (``waited``: it found every place in service taken)."""
        micros = round(served.service_time_us)
        with self._lock:
            self._histogram.record_value(min(max(micros, LOWEST_US), HIGHEST_US))
            self._served.append(served)
            self.waited += waited

    def served(self) -> list[Served]:
        """The requests served so far, in the order their responses went out."""
        with self._lock:
            return list(self._served)

    def histogram(self) -> HdrHistogram:
        """A copy of the histogram (µs, arrival to response)."""
        with self._lock:
            copy = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
            copy.add(self._histogram)
            return copy

    def to_json(self) -> dict[str, Any]:
        """``GET /sandbox/v1/service-time``'s measurement: the count, min, mean, max (µs),
        the peak in service, how many waited in line, and the histogram in HdrHistogram's
        compressed encoding (base64 text; ``""`` when empty)."""
        histogram = self.histogram()
        count = int(histogram.get_total_count())
        return {
            "unit": "us",
            "count": count,
            "min": int(histogram.get_min_value()) if count else 0,
            "mean": float(histogram.get_mean_value()) if count else 0.0,
            "max": int(histogram.get_max_value()) if count else 0,
            "peak_in_service": self.peak_in_service,
            "waited": self.waited,
            "histogram": histogram.encode().decode("ascii") if count else "",
        }


def service_time_document(faults: Any, record: ServiceRecord | None) -> dict[str, Any]:
    """``GET /sandbox/v1/service-time``: the shape asked (``faults.service_time_us``,
    ``faults.concurrency``) and the measurement (``record``; None: nothing is measured,
    as without any fault)."""
    measured = record.to_json() if record is not None else ServiceRecord().to_json()
    return {
        "endpoint": "authorize",
        "service_time_us": faults.service_time_us,
        "concurrency": faults.concurrency,
        "measured": record is not None,
        **measured,
    }


class ServiceGate:
    """The service part of an authorize request: wait in line for one of ``concurrency``
    places (an ``asyncio.Semaphore``, made in the serving loop), be served (``serve``),
    and have the response held until ``service_time_us`` after service began; each
    request's times go into :attr:`record`."""

    def __init__(self, service_time_us: int | None, concurrency: int | None) -> None:
        self.service_time_us = service_time_us
        self.concurrency = concurrency
        self.record = ServiceRecord()
        self._semaphore: asyncio.Semaphore | None = None
        self._timer: DeadlineTimer | None = None
        self._timer_made = False

    def restart(self) -> None:
        """Forget the measurements (``Sandbox.reset(faults=True)``); the places in service
        stay with the requests holding them."""
        self.record = ServiceRecord()

    async def serve(
        self,
        endpoint: str,
        serve: Callable[[Send], Awaitable[None]],
        send: Send,
        wrap: Callable[[Send], Send] | None = None,
    ) -> None:
        """Run ``serve(send)`` as the service of one request; ``wrap`` (the pause's) goes
        around the server's ``send``, inside the hold: the response is handed to the
        server when both let it go, and that moment is what is measured."""
        arrived = time.monotonic_ns()
        if self.concurrency is None:
            await self._served(endpoint, arrived, False, serve, send, wrap)
            return
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)  # in the serving loop
        waits = self._semaphore.locked()
        async with self._semaphore:
            await self._served(endpoint, arrived, waits, serve, send, wrap)

    async def _served(
        self,
        endpoint: str,
        arrived: int,
        waited: bool,
        serve: Callable[[Send], Awaitable[None]],
        send: Send,
        wrap: Callable[[Send], Send] | None,
    ) -> None:
        record = self.record
        started = time.monotonic_ns()
        deadline = started + self.service_time_us * 1000 if self.service_time_us else None
        if deadline is not None and not self._timer_made:
            self._timer_made = True
            self._timer = DeadlineTimer.create(asyncio.get_running_loop())
        record.in_service += 1
        record.peak_in_service = max(record.peak_in_service, record.in_service)
        handed_at = 0

        async def handed(message: dict[str, Any]) -> None:
            nonlocal handed_at
            if message["type"] == "http.response.start":
                handed_at = time.monotonic_ns()
            await send(message)

        out = wrap(handed) if wrap is not None else handed

        async def held(message: dict[str, Any]) -> None:
            if message["type"] != "http.response.start" or handed_at:
                await out(message)
                return
            if deadline is not None:
                await hold_until(deadline, self._timer)
            await out(message)
            record.add(Served(endpoint, arrived, started, handed_at), waited=waited)

        try:
            await serve(held)
        finally:
            record.in_service -= 1


__all__ = [
    "SERVED_KEPT",
    "SPIN_NS",
    "DeadlineTimer",
    "Served",
    "ServiceGate",
    "ServiceRecord",
    "hold_until",
    "service_time_document",
]
