"""What a capacity search judges, step by step: each process's tally of its calls per step,
and the master's merge of every process's tallies.

A step's calls are those intended in it, timed from the intended start; a call still in
flight at close is censored. Free of locust and gevent (docs/internals.md, "A capacity
search's steps").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from authzkit.loadtest.record.histograms import (
    HIGHEST_US,
    encode,
    merge,
    new_histogram,
    record_micros,
)
from authzkit.loadtest.record.schedule import LATE_US, Bounds, SteppedRate

COUNTS = ("sent", "answered", "failures", "censored", "late", "cap_reached", "in_flight")
# The run directory's two files between the search and the run: the steps it announced (and
# its stop), written by the search; the events of the run (every process ready, each merged
# step), one JSON line each, appended by the master or the lone process.
CONTROL_FILE = "capacity_control.json"
STEPS_FILE = "capacity_steps.jsonl"


@dataclass
class _Tally:
    """One step's judged calls in one process."""

    bounds: Bounds
    latencies: list[int] = field(default_factory=list)  # µs, from the intended start
    lags: list[int] = field(default_factory=list)  # µs, send minus intended start
    sent: int = 0
    answered: int = 0
    failures: int = 0
    censored: int = 0
    late: int = 0
    cap_reached: int = 0


@dataclass
class _Call:
    index: int
    intended_at: float
    failed: bool = False


class StepRecorder:
    """One process's tallies of the steps of ``rate``, fed by its calls: :meth:`begin` when a
    call is sent, :meth:`failed` when one of its requests fails, :meth:`end` when it ends;
    :meth:`closed` hands out each step once it is over. Not locked: Locust's users are
    greenlets and none of this yields."""

    def __init__(self, rate: SteppedRate) -> None:
        self.rate = rate
        self._tallies: dict[int, _Tally] = {}
        self._open: dict[Any, _Call] = {}
        self._closed: set[int] = set()

    def _tally(self, bounds: Bounds) -> _Tally:
        tally = self._tallies.get(bounds.step.index)
        if tally is None:
            tally = self._tallies[bounds.step.index] = _Tally(bounds)
        return tally

    def begin(self, token: Any, intended_at: float, sent_at: float) -> None:
        """The call ``token`` (its greenlet) meant to start at ``intended_at`` was sent at
        ``sent_at`` (the schedule's clock); counted when it falls in a step's judged part."""
        bounds = self.rate.bounds_at(intended_at)
        if bounds is None or intended_at < bounds.judged_from:
            return
        if bounds.step.index in self._closed:
            return
        tally = self._tally(bounds)
        lag_us = min(max(round((sent_at - intended_at) * 1e6), 1), HIGHEST_US)
        tally.sent += 1
        tally.lags.append(lag_us)
        if lag_us > LATE_US:
            tally.late += 1
        self._open[token] = _Call(bounds.step.index, intended_at)

    def capped(self) -> None:
        """A start of the current step found the in-flight cap reached."""
        bounds = self.rate.current
        if bounds is not None:
            self._tally(bounds).cap_reached += 1

    def failed(self, token: Any) -> None:
        """A request of the call ``token`` failed (any of its rows)."""
        call = self._open.get(token)
        if call is not None:
            call.failed = True

    def end(self, token: Any, ended_at: float) -> None:
        """The call ``token`` ended at ``ended_at``."""
        call = self._open.pop(token, None)
        if call is None:
            return
        tally = self._tallies[call.index]
        tally.answered += 1
        tally.failures += call.failed
        tally.latencies.append(_micros(ended_at - call.intended_at))

    def closed(self, now: float, in_flight: int = 0) -> list[dict[str, Any]]:
        """The tallies of the steps over by ``now``: their starts all sent, and their calls
        all ended or ``grace`` past the step's end (those still in flight are judged at their
        age then); ``in_flight`` is the process's calls in flight, any step's."""
        found = []
        for bounds in self.rate.done:
            index = bounds.step.index
            if index in self._closed:
                continue
            waiting = [t for t, call in self._open.items() if call.index == index]
            if waiting and now < bounds.end + bounds.step.grace:
                continue
            tally = self._tally(bounds)
            for token in waiting:
                call = self._open.pop(token)
                tally.censored += 1
                tally.failures += call.failed
                tally.latencies.append(_micros(now - call.intended_at))
            self._closed.add(index)
            del self._tallies[index]
            found.append(_part(tally, in_flight))
        return found


def _micros(seconds: float) -> int:
    return min(max(round(seconds * 1e6), 1), HIGHEST_US)


def _part(tally: _Tally, in_flight: int) -> dict[str, Any]:
    latency, lag = new_histogram(), new_histogram()
    record_micros(latency, tally.latencies)
    record_micros(lag, tally.lags)
    step = tally.bounds.step
    return {
        "index": step.index,
        "rate": step.rate,
        "window_s": step.seconds - step.warm_up,
        "sent": tally.sent,
        "answered": tally.answered,
        "failures": tally.failures,
        "censored": tally.censored,
        "late": tally.late,
        "cap_reached": tally.cap_reached,
        "in_flight": in_flight,
        "latency": encode(latency),
        "lag": encode(lag),
        "parts": 1,
    }


class StepMerger:
    """The tallies of ``expected`` processes, merged step by step: :meth:`add` returns the
    merged step once the last process's tally of it arrived."""

    def __init__(self, expected: int) -> None:
        self.expected = max(int(expected or 1), 1)
        self._parts: dict[int, list[Mapping[str, Any]]] = {}
        self._ready: set[str] = set()

    def ready(self, process: str) -> bool:
        """``process`` waits for its first step; True once every process does (once)."""
        before = len(self._ready) >= self.expected
        self._ready.add(process)
        return not before and len(self._ready) >= self.expected

    def add(self, part: Mapping[str, Any]) -> dict[str, Any] | None:
        """Take one process's tally; the merged step when it was the last one missing."""
        index = int(part["index"])
        parts = self._parts.setdefault(index, [])
        parts.append(part)
        if len(parts) < self.expected:
            return None
        del self._parts[index]
        return merge_parts(parts)


def merge_parts(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Tallies of one step from several processes as one (counts add, histograms merge)."""
    first = parts[0]
    merged: dict[str, Any] = {
        "index": int(first["index"]),
        "rate": float(first["rate"]),
        "window_s": float(first["window_s"]),
        **{key: sum(int(p.get(key, 0)) for p in parts) for key in COUNTS},
        "parts": sum(int(p.get("parts", 1)) for p in parts),
    }
    for key in ("latency", "lag"):
        merged[key] = encode(merge(part[key] for part in parts))
    return merged


__all__ = ["CONTROL_FILE", "COUNTS", "STEPS_FILE", "StepMerger", "StepRecorder", "merge_parts"]
