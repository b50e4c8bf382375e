"""The open model's schedule: when requests are meant to start, and how far behind they did.

Starts fixed in advance, whatever the answers do (no coordinated omission); the generator's
own lag counted, never hidden; a capacity search's steps as start offsets. Free of locust
and gevent (docs/internals.md, "The open model's schedule").
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from hdrh.histogram import HdrHistogram

from authzkit.loadtest.record.histograms import (
    FLUSH_EVERY,
    encode,
    merge,
    new_histogram,
    record_micros,
    values_at,
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
    deltas between :meth:`drain` calls (a worker's report); ``peak_in_flight`` is a maximum;
    ``began_at`` is when the schedule's starts count from, on the wall clock (epoch
    seconds), so a run's intended starts line up with a server's own stamps.
    """

    def __init__(self) -> None:
        self.active = False  # an open-model run was seen (its fields go into the summary)
        self.in_flight = 0
        self.seconds: float | None = None  # how long the schedule runs (kept across resets)
        self.began_at: float | None = None  # the earliest schedule's origin (kept too)
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

    def began(self, at: float) -> None:
        """The schedule's starts count from ``at`` (``time.perf_counter`` seconds): kept as
        the wall-clock time it was (the earliest, where several processes began)."""
        self._began(time.time() - (time.perf_counter() - at))

    def _began(self, wall: float) -> None:
        self.began_at = wall if self.began_at is None else min(self.began_at, wall)

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
            "began_at": self.began_at,
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
        if drained.get("began_at") is not None:
            self._began(float(drained["began_at"]))
        if drained.get("lag"):
            self._lag = merge([self.lag, drained["lag"]])

    def summary(self, rate: float | None) -> dict[str, Any]:
        """summary.json's ``schedule``: the fixed names, plus ``peak_in_flight``, ``seconds``
        (how long the schedule ran; the longest of the workers') and ``began_at``."""
        return {
            "rate": rate,
            "intended": self.intended,
            "sent": self.sent,
            "late": self.late,
            "lag_p99_us": values_at(self.lag, [99.0])[99.0],
            "cap_reached": self.cap_reached,
            "peak_in_flight": self.peak_in_flight,
            "seconds": self.seconds,
            "began_at": self.began_at,
        }


@dataclass(frozen=True)
class Step:
    """One step of a capacity search, as every process of the run follows it: ``rate``
    starts per second in total (each process its share) from ``start`` (wall-clock epoch
    seconds, so processes on several machines line up) for ``seconds``; the starts of the
    first ``warm_up`` seconds are not judged, and the calls still in flight ``grace``
    seconds after its end are judged at the age they reached (they are past every latency
    the search judges by then)."""

    index: int
    rate: float
    start: float
    seconds: float
    warm_up: float = 0.0
    grace: float = 0.0

    @property
    def end(self) -> float:
        return self.start + self.seconds

    def message(self) -> dict[str, Any]:
        """The step as a Locust message's (or the control file's) plain data."""
        return asdict(self)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Step:
        """A step back from :meth:`message`; a :class:`ConfigError` naming what is wrong."""
        try:
            step = cls(
                index=int(data["index"]),
                rate=float(data["rate"]),
                start=float(data["start"]),
                seconds=float(data["seconds"]),
                warm_up=float(data.get("warm_up", 0.0)),
                grace=float(data.get("grace", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"not a capacity step: {data!r} ({exc})") from None
        if not (step.rate > 0 and step.seconds > 0 and 0 <= step.warm_up < step.seconds):
            raise ConfigError(f"not a capacity step: {data!r}")
        return step


@dataclass(frozen=True)
class Bounds:
    """A step on this process's clock (``time.perf_counter`` seconds): where it starts, where
    its judged part begins, where it ends."""

    step: Step
    start: float
    judged_from: float
    end: float


class SteppedRate:
    """The rate one process follows during a capacity search: steps announced while the run
    goes on (:meth:`announce`), until :meth:`stop`.

    :meth:`offsets` is the iterator :func:`run_schedule` takes: this process's starts of
    each step in turn (``rate / workers`` of it, constant or Poisson), on the clock the
    schedule runs on, waiting (``idle``) between steps until the next is announced. With
    constant arrivals the processes interleave (process ``phase`` of ``workers`` starts
    ``phase / rate`` after the step's start), so together they start evenly spaced calls,
    not ``workers`` calls at once (every process follows the same wall-clock step). A step
    taken up late (its start already past: a process that joined late) skips the starts it
    missed rather than sending them in a burst. :meth:`bounds_at` tells which step an
    intended start belongs to."""

    def __init__(
        self,
        workers: int = 1,
        *,
        phase: int = 0,
        arrivals: str = "constant",
        seed: int | str | None = None,
        wall: Callable[[], float] | None = None,
    ) -> None:
        self.workers = max(int(workers or 1), 1)
        self.phase = int(phase or 0) % self.workers
        self.arrivals = arrivals
        self._draw = random.Random(seed)
        self._wall = wall or time.time
        self._steps: dict[int, Step] = {}
        self.stopped = False
        self.current: Bounds | None = None  # the step whose starts are being sent
        self.done: list[Bounds] = []  # steps whose starts were all sent, in order
        self.waiting = False  # asking for a step that is not announced yet (ready)

    def announce(self, step: Step) -> None:
        """Follow ``step`` once the steps before it are done (a repeat is ignored)."""
        self._steps.setdefault(step.index, step)

    def stop(self) -> None:
        """No more steps: :meth:`offsets` ends (mid-step too, at its next start)."""
        self.stopped = True

    def offsets(
        self, *, clock: Callable[[], float], idle: Callable[[float], Any], poll: float = 0.02
    ) -> Iterator[float]:
        """Start offsets (seconds after the first call, on ``clock``) of every step in turn."""
        base_clock, base_wall = clock(), self._wall()
        index = min(self._steps, default=0)
        while not self.stopped:
            step = self._steps.get(index)
            if step is None:
                later = [i for i in self._steps if i > index]
                if later:  # a step never announced: go on with the next one that was
                    index = min(later)
                    continue
                self.waiting = True
                idle(poll)
                continue
            self.waiting = False
            first = step.start - base_wall
            bounds = Bounds(
                step,
                base_clock + first,
                base_clock + first + step.warm_up,
                base_clock + first + step.seconds,
            )
            self.current = bounds
            yield from self._step_offsets(step, first, clock() - base_clock)
            self.current = None
            self.done.append(bounds)
            index += 1

    def _step_offsets(self, step: Step, first: float, now: float) -> Iterator[float]:
        rate = step.rate / self.workers
        end = first + step.seconds
        if self.arrivals == "constant":
            first += self.phase / step.rate  # interleaved with the other processes
        number = math.ceil((now - first) * rate) if now > first else 0
        offset = first + number / rate
        while offset < end and not self.stopped:
            yield offset
            if self.arrivals == "constant":
                number += 1
                offset = first + number / rate
            else:
                offset += self._draw.expovariate(rate)

    def bounds_at(self, at: float) -> Bounds | None:
        """The step an intended start at ``at`` (on the schedule's clock) belongs to."""
        current = self.current
        if current is not None and current.start <= at < current.end:
            return current
        for bounds in reversed(self.done):
            if bounds.start <= at < bounds.end:
                return bounds
        return None


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
    on_capped: Callable[[], Any] | None = None,
    stopped: Callable[[], bool] = lambda: False,
    awake: Callable[[float | None], Any] | None = None,
    send_now: Callable[[float], bool] | None = None,
) -> None:
    """Start ``call(intended_at)`` in ``pool`` at every offset (seconds after now, on
    ``clock``), never waiting for answers: only a full pool (the in-flight cap) holds the
    next start back, and that is counted (``cap_reached``, and ``on_capped`` told) and shows
    as lag. Once ``stopped()`` (the run was interrupted) no further call starts. ``awake``
    is told the next start's time before each sleep (``None`` before a wait for room).
    ``send_now(intended_at)`` may send a start itself, without a call in the pool (``True``).

    One wake starts EVERY start that is due by then, oldest first, before sleeping again:
    the loop's timer wakes at whole milliseconds (:data:`LATE_US`), so above ~1000/s one
    wake per start would fall further behind at every wake. The sleep is the exact time to
    the next start (no rounding here); a start is never sent before its intended time.
    """
    started = clock()
    stats.began(started)
    upcoming = next(offsets, None)
    while upcoming is not None:
        intended_at = started + upcoming
        if awake is not None:
            awake(intended_at)
        now = clock()
        if intended_at > now:
            sleep(intended_at - now)
            now = clock()
        # the batch: this start and every later one already due at this wake
        while True:
            if stopped():
                return
            stats.due()
            if pool.full():
                stats.capped()
                if on_capped is not None:
                    on_capped()
                if awake is not None:
                    awake(None)
                pool.wait_available()
            if send_now is None or not send_now(intended_at):
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
    "Bounds",
    "CallPool",
    "ScheduleStats",
    "Step",
    "SteppedRate",
    "arrival_offsets",
    "planned_count",
    "process_rate",
    "run_schedule",
]
