"""The open model's schedule: when requests are meant to start, and how far behind they did.

A closed-loop user sends its next request only after the previous answer, so a service that
stalls for a second also stops the load for a second and the requests real resource
servers would have sent meanwhile are never measured (coordinated omission). The open
model starts requests on a schedule fixed in advance: at ``rate`` per second, evenly spaced
(``constant``) or with exponential gaps (``poisson``, seeded for reproducibility), whatever
the answers do. Each request's response time is then measured from its INTENDED start, and
the generator's own falling behind (a starved CPU, the in-flight cap reached) is counted,
never hidden: :class:`ScheduleStats` keeps the intended, sent and late starts, the times
the cap was reached, the peak in flight and a microsecond histogram of the schedule lag
(actual send minus intended start).

Free of locust and of gevent: :func:`run_schedule` takes its clock, its sleep and its pool
of in-flight calls as arguments (:mod:`authzkit.loadtest.record.users` passes gevent's, the tests
a fake clock), so the arithmetic is tested in-process.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from hdrh.histogram import HdrHistogram

from authzkit.loadtest.record.histograms import (
    FLUSH_EVERY,
    decode,
    encode,
    new_histogram,
    record_micros,
)
from authzkit.shared.options.load import ARRIVALS, DEFAULT_MAX_IN_FLIGHT
from authzkit.wire.errors import ConfigError

log = logging.getLogger(__name__)

# A start sent more than 2 ms after its intended time is late. Not 1 ms: gevent's loop
# waits in epoll with whole-millisecond timeouts (libev rounds a timer's wait up to the next
# millisecond), so on an idle machine a timer already fires up to ~1 ms after its time and a
# 1 ms threshold counted the timer's own resolution as lateness (a bare gevent loop at
# 200/s read ~25 % "late"). 2 ms = one timer tick plus 1 ms of real delay; the lag
# percentiles (lag_p99_us, the lag histogram) are reported whatever the threshold.
LATE_US = 2000
SCHEDULE_KEYS = ("rate", "intended", "sent", "late", "lag_p99_us", "cap_reached")


def process_rate(rate: float, workers: int) -> float:
    """One process's share of a total ``rate`` run by ``workers`` processes (at least one)."""
    if not rate or rate <= 0 or math.isnan(rate) or math.isinf(rate):
        raise ConfigError(f"--rate must be a positive number of requests per second, got {rate}")
    return rate / max(int(workers or 1), 1)


def arrival_offsets(
    rate: float,
    arrivals: str = "constant",
    *,
    seconds: float | None = None,
    seed: int | str | None = None,
) -> Iterator[float]:
    """Intended start times in seconds after the schedule's start, ascending: every
    ``1/rate`` s (``constant``, the first at 0) or with exponential gaps of mean ``1/rate``
    (``poisson``, a Poisson process; the same ``seed`` gives the same times). Ends before
    ``seconds`` when given, else never."""
    if rate <= 0:
        raise ConfigError(f"the schedule's rate must be positive, got {rate}")
    if arrivals not in ARRIVALS:
        raise ConfigError(f"--arrivals must be one of {', '.join(ARRIVALS)}, got {arrivals!r}")
    draw = random.Random(seed)
    number = 0
    offset = 0.0 if arrivals == "constant" else draw.expovariate(rate)
    while seconds is None or offset < seconds:
        yield offset
        number += 1
        # k / rate, not a running sum: no rounding drift over millions of starts
        offset = number / rate if arrivals == "constant" else offset + draw.expovariate(rate)


def planned_count(
    rate: float, seconds: float, arrivals: str = "constant", *, seed: int | str | None = None
) -> int:
    """How many starts the schedule intends within ``seconds`` (what a finished run's
    ``intended`` equals)."""
    return sum(1 for _ in arrival_offsets(rate, arrivals, seconds=seconds, seed=seed))


class ScheduleStats:
    """One process's schedule counters and lag histogram, merged like the latency histograms.

    ``intended`` counts starts whose time came, ``sent`` those actually sent (``late`` of
    them more than :data:`LATE_US` after their time), ``cap_reached`` the starts that found
    ``--max-in-flight`` calls already running and had to wait for one to end. Counters are
    deltas between :meth:`drain` calls (a worker's report); ``peak_in_flight`` is a maximum.
    """

    def __init__(self) -> None:
        self.active = False  # an open-model run was seen (its fields go into the summary)
        self.in_flight = 0
        self.seconds: float | None = None  # how long the schedule runs (kept across resets)
        self.reset()

    def reset(self) -> None:
        """Forget the counters (a new test, or Locust's stats were reset)."""
        self.intended = self.sent = self.late = self.cap_reached = self.peak_in_flight = 0
        self._lag = new_histogram()
        self._lags: list[int] = []  # lags (µs) not yet in the histogram: one append a start

    @property
    def lag(self) -> HdrHistogram:
        """The schedule lag histogram (µs), every start so far included."""
        if self._lags:
            record_micros(self._lag, self._lags)
            self._lags.clear()
        return self._lag

    def planned(self, seconds: float | None) -> None:
        """The schedule will run ``seconds`` (``None``: until stopped)."""
        self.seconds = seconds

    def due(self) -> None:
        """A start's intended time came."""
        self.intended += 1

    def capped(self) -> None:
        """A start found the in-flight cap reached."""
        self.cap_reached += 1

    def started(self, intended_at: float, now: float) -> float:
        """A start was sent at ``now`` (seconds, same clock as ``intended_at``); returns its
        lag in seconds."""
        lag = max(now - intended_at, 0.0)
        lag_us = min(max(round(lag * 1_000_000), 1), 60_000_000)
        lags = self._lags
        lags.append(lag_us)
        if len(lags) >= FLUSH_EVERY:
            record_micros(self._lag, lags)
            lags.clear()
        self.sent += 1
        if lag_us > LATE_US:
            self.late += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return lag

    def finished(self) -> None:
        """A sent start's call ended (answer, failure or kill)."""
        self.in_flight -= 1

    def drain(self) -> dict[str, Any]:
        """What a worker reports: the counters since its last report and its lag histogram
        (encoded), then forget them."""
        found = {
            "intended": self.intended,
            "sent": self.sent,
            "late": self.late,
            "cap_reached": self.cap_reached,
            "peak_in_flight": self.peak_in_flight,
            "seconds": self.seconds,
            "lag": encode(self.lag),
        }
        self.reset()
        return found

    def add(self, drained: Mapping[str, Any] | None) -> None:
        """Merge a worker's :meth:`drain` (counts add, the lag histograms merge exactly)."""
        if not drained:
            return
        self.active = True
        self.intended += int(drained.get("intended", 0))
        self.sent += int(drained.get("sent", 0))
        self.late += int(drained.get("late", 0))
        self.cap_reached += int(drained.get("cap_reached", 0))
        self.peak_in_flight = max(self.peak_in_flight, int(drained.get("peak_in_flight", 0)))
        if drained.get("seconds") is not None:
            self.seconds = max(self.seconds or 0.0, float(drained["seconds"]))
        if drained.get("lag"):
            self.lag.add(decode(drained["lag"]))

    def summary(self, rate: float | None) -> dict[str, Any]:
        """summary.json's ``schedule``: the fixed names, plus ``peak_in_flight`` and
        ``seconds`` (how long the schedule ran; the longest of the workers')."""
        count = self.lag.get_total_count()
        return {
            "rate": rate,
            "intended": self.intended,
            "sent": self.sent,
            "late": self.late,
            "lag_p99_us": int(self.lag.get_value_at_percentile(99.0)) if count else 0,
            "cap_reached": self.cap_reached,
            "peak_in_flight": self.peak_in_flight,
            "seconds": self.seconds,
        }


class CallPool(Protocol):
    """What :func:`run_schedule` needs of a pool of in-flight calls (``gevent.pool.Pool``)."""

    def full(self) -> bool: ...

    def wait_available(self) -> Any: ...

    def spawn(self, call: Callable[..., Any], *args: Any) -> Any: ...


def run_schedule(
    offsets: Iterator[float],
    call: Callable[[float], Any],
    *,
    pool: CallPool,
    stats: ScheduleStats,
    clock: Callable[[], float],
    sleep: Callable[[float], Any],
) -> None:
    """Start ``call(intended_at)`` in ``pool`` at every offset (seconds after now, on
    ``clock``), never waiting for answers: only a full pool (the in-flight cap) holds the
    next start back, and that is counted (``cap_reached``) and shows as lag.

    One wake starts EVERY start that is due by then, oldest first, before sleeping again:
    the loop's timer wakes at whole milliseconds (:data:`LATE_US`), so above ~1000/s one
    wake per start would fall further behind at every wake. The sleep is the exact time to
    the next start (no rounding here); a start is never sent before its intended time.
    """
    started = clock()
    upcoming = next(offsets, None)
    while upcoming is not None:
        intended_at = started + upcoming
        now = clock()
        if intended_at > now:
            sleep(intended_at - now)
            now = clock()
        # the batch: this start and every later one already due at this wake
        while True:
            stats.due()
            if pool.full():
                stats.capped()
                pool.wait_available()
            pool.spawn(call, intended_at)
            upcoming = next(offsets, None)
            if upcoming is None:
                return
            intended_at = started + upcoming
            if intended_at > now:
                break


__all__ = [
    "ARRIVALS",
    "DEFAULT_MAX_IN_FLIGHT",
    "LATE_US",
    "SCHEDULE_KEYS",
    "CallPool",
    "ScheduleStats",
    "arrival_offsets",
    "planned_count",
    "process_rate",
    "run_schedule",
]
