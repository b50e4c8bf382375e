"""The capacity search's reasoning, free of Locust, processes and time: judge a step against
the SLO (held, broke, lagged), choose the next rate (probe up, then bisect), and say what
the answer is and what limited it (docs/internals.md, "Judging a step").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

GROWTH = 2.0  # each probe offers twice the rate of the last one held
HELD, BROKE, LAGGED = "held", "broke", "lagged"
SERVICE, GENERATOR, MAX_RATE = "service", "generator", "max-rate"
LAG_TOLERANCE_SHARE = 0.1  # of --max-p99-ms: schedule lag the generator may have
LAG_TOLERANCE_MIN_MS = 2.0  # never below one timer tick and a millisecond (schedule.LATE_US)


@dataclass(frozen=True)
class Slo:
    """What every step is judged against."""

    max_p99_ms: float
    max_p999_ms: float | None = None
    max_failure_ratio: float = 0.01

    def describe(self) -> str:
        """``p99 ≤ 50 ms, p99.9 ≤ 200 ms, failures ≤ 1 %``."""
        parts = [f"p99 <= {self.max_p99_ms:g} ms"]
        if self.max_p999_ms is not None:
            parts.append(f"p99.9 <= {self.max_p999_ms:g} ms")
        parts.append(f"failure ratio <= {self.max_failure_ratio:g}")
        return ", ".join(parts)

    @property
    def largest_ms(self) -> float:
        """The largest latency judged: a call older than this is past every limit."""
        return max(self.max_p99_ms, self.max_p999_ms or 0.0)


@dataclass(frozen=True)
class StepResult:
    """One step as measured (its judged part, every process merged)."""

    index: int
    offered_per_s: float
    achieved_per_s: float
    requests: int
    failures: int
    p50_ms: float
    p99_ms: float
    p999_ms: float
    lag_p99_ms: float
    cap_reached: int = 0
    censored: int = 0
    in_flight: int = 0
    processes: int = 1

    @property
    def failure_ratio(self) -> float:
        return self.failures / self.requests if self.requests else 0.0


@dataclass(frozen=True)
class Verdict:
    """A judged step: ``held``, ``broke`` or ``lagged``, and why in one line."""

    result: StepResult
    verdict: str
    why: str


def lag_tolerance_ms(slo: Slo) -> float:
    """How far behind schedule the generator may fall before a broken latency is its own."""
    return max(LAG_TOLERANCE_MIN_MS, LAG_TOLERANCE_SHARE * slo.max_p99_ms)


def judge(result: StepResult, slo: Slo) -> Verdict:
    """The step's verdict, naming the first figure past its limit."""
    if result.requests == 0:
        return Verdict(result, BROKE, "no call was judged (none started in the judged part)")
    if result.failure_ratio > slo.max_failure_ratio:
        return Verdict(
            result,
            BROKE,
            f"failure ratio {result.failure_ratio:.4f} > --max-failure-ratio "
            f"{slo.max_failure_ratio:g}",
        )
    broken, limit, figure = None, 0.0, 0.0
    if result.p99_ms > slo.max_p99_ms:
        broken = f"p99 {_ms(result.p99_ms)} ms > --max-p99-ms {slo.max_p99_ms:g}"
        limit, figure = slo.max_p99_ms, result.p99_ms
    elif slo.max_p999_ms is not None and result.p999_ms > slo.max_p999_ms:
        broken = f"p99.9 {_ms(result.p999_ms)} ms > --max-p999-ms {slo.max_p999_ms:g}"
        limit, figure = slo.max_p999_ms, result.p999_ms
    if broken is None:
        return Verdict(result, HELD, "every SLO held")
    tolerance = lag_tolerance_ms(slo)
    # The generator's own lateness explains the break only when the figure without it
    # would have held; a service far past its limit broke whatever the lag.
    explained = figure - result.lag_p99_ms <= limit
    if result.lag_p99_ms > tolerance and result.cap_reached == 0 and explained:
        return Verdict(
            result,
            LAGGED,
            f"{broken}, but the generator fell behind (schedule lag p99 "
            f"{_ms(result.lag_p99_ms)} ms > {tolerance:g} ms): not the service's",
        )
    return Verdict(result, BROKE, broken)


@dataclass(frozen=True)
class Search:
    """Where to probe next, from the steps judged so far."""

    start_rate: float
    max_rate: float | None = None
    precision: float = 0.05

    def _capped(self, rate: float) -> float:
        return rate if self.max_rate is None else min(rate, self.max_rate)

    def next_rate(self, steps: Sequence[Verdict]) -> float | None:
        """The rate of the next step, or None when the search is over."""
        if not steps:
            return self._capped(self.start_rate)
        if any(s.verdict == LAGGED for s in steps):
            return None
        held, broke = _bracket(steps)
        if broke is None:
            assert held is not None
            if self.max_rate is not None and held >= self.max_rate:
                return None
            return self._capped(held * GROWTH)
        if held is None or broke <= held * (1 + self.precision):
            return None
        return (held + broke) / 2


def _bracket(steps: Sequence[Verdict]) -> tuple[float | None, float | None]:
    """The highest rate held below the lowest rate that broke, and that lowest rate."""
    broke = min((s.result.offered_per_s for s in steps if s.verdict == BROKE), default=None)
    held = max(
        (
            s.result.offered_per_s
            for s in steps
            if s.verdict == HELD and (broke is None or s.result.offered_per_s < broke)
        ),
        default=None,
    )
    return held, broke


@dataclass(frozen=True)
class Answer:
    """The search's answer: the capacity (None when even the first step broke), what
    limited it and why, and for a generator-limited search how many processes it takes."""

    capacity_per_s: float | None
    limited_by: str
    why: str
    knee_per_s: float | None = None  # the lowest rate that broke
    per_process_max_per_s: float | None = None
    processes_needed: int | None = None


def answer(steps: Sequence[Verdict], search: Search) -> Answer:
    """What the judged ``steps`` of a finished search found."""
    held, broke = _bracket(steps)
    lagged = [s for s in steps if s.verdict == LAGGED]
    if lagged:
        return _generator_answer(steps, lagged[0], held, broke)
    if broke is None:
        top = held if held is not None else search.start_rate
        return Answer(top, MAX_RATE, f"every step held up to --max-rate {top:g}/s")
    first = min((s for s in steps if s.verdict == BROKE), key=lambda s: s.result.offered_per_s)
    if held is None:
        return Answer(None, SERVICE, f"the lowest rate broke the SLO: {first.why}", broke)
    return Answer(held, SERVICE, f"the SLO broke at {_rate(broke)}/s: {first.why}", broke)


def _generator_answer(
    steps: Sequence[Verdict], lagged: Verdict, held: float | None, broke: float | None
) -> Answer:
    """The generator fell behind below the first rate that broke: how many processes
    would keep the schedule, from the best rate per process any step achieved."""
    processes = max(s.result.processes for s in steps)
    best = max(s.result.achieved_per_s / max(s.result.processes, 1) for s in steps)
    wanted = lagged.result.offered_per_s * GROWTH
    needed = max(math.ceil(wanted / best), processes + 1) if best > 0 else processes + 1
    return Answer(
        held,
        GENERATOR,
        f"the generator could not keep schedule at {_rate(lagged.result.offered_per_s)}/s "
        f"with {processes} process{'es' if processes > 1 else ''} (about "
        f"{_rate(best)}/s each at best): run with --processes {needed} or {needed} "
        f"workers to search beyond it",
        broke,
        best,
        needed,
    )


def _ms(value: float) -> str:
    """Milliseconds as read: whole from 100 on (``1,500``), else three significant digits
    (``73.2``, ``0.187``)."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _rate(value: float) -> str:
    """A rate as read: ``190``, ``12.5``, ``0.75``."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


__all__ = [
    "BROKE",
    "GENERATOR",
    "GROWTH",
    "HELD",
    "LAGGED",
    "MAX_RATE",
    "SERVICE",
    "Answer",
    "Search",
    "Slo",
    "StepResult",
    "Verdict",
    "answer",
    "judge",
    "lag_tolerance_ms",
]
