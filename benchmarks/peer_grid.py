"""How punctual a generator's arrivals were, judged at the server: each arrival's distance
from the run's even grid (one slot every 1/rate s, its phase fitted to the arrivals); and,
where the generator says when its schedule began, how late each arrival was for its own
intended start (a figure with no fitted constant, to read beside the generator's own lag).

Arrivals are matched to slots in order; a slot with no arrival (a call the generator
dropped) is skipped where skipping it brings the arrivals closest to their slots, so a
drop reads as a drop, not as every later call being late. Pure functions of lists of
``time.monotonic_ns`` values (``tests/test_peer_grid.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_SKIPPED = 5_000  # slots without an arrival the matching considers (bounds its memory)
# A slot at either edge of the window whose arrival fell just outside it: skips allowed
# beyond the window's count of slots less arrivals.
EDGE_SLOTS = 2


@dataclass(frozen=True)
class Punctuality:
    """The arrivals of one window against their grid: how many, how many slots between
    the first and the last had none,
    and the distance of each arrival from its slot (µs), p50 and p99 of its absolute value,
    and of how late (negative: early) the latest 1 % were."""

    arrivals: int
    slots: int
    skipped: int
    deviation_p50_us: float
    deviation_p99_us: float
    lateness_p99_us: float


def shorth_centre(values: np.ndarray) -> float:
    """The point whose median distance to ``values`` is smallest: the middle of the
    shortest interval holding half of them (robust to a late tail, unlike the mean)."""
    ordered = np.sort(values)
    half = (len(ordered) + 1) // 2
    widths = ordered[half - 1 :] - ordered[: len(ordered) - half + 1]
    start = int(np.argmin(widths))
    return float(ordered[start] + ordered[start + half - 1]) / 2


def circular_phase(arrivals: np.ndarray, period: float) -> float:
    """The grid's phase in ``[0, period)`` that most arrivals sit closest to: the shorth of
    the arrivals folded onto one period, the circle cut wherever suits it best."""
    folded = np.sort(np.mod(arrivals, period))
    doubled = np.concatenate([folded, folded + period])
    half = (len(folded) + 1) // 2
    widths = doubled[half - 1 : half - 1 + len(folded)] - doubled[: len(folded)]
    start = int(np.argmin(widths))
    return float((doubled[start] + doubled[start + half - 1]) / 2 % period)


def match_slots(offsets: np.ndarray, skipped: int) -> np.ndarray:
    """For arrivals at ``offsets`` (in periods from slot 0, sorted), the slot of each: in
    order, exactly ``skipped`` slots left without an arrival, chosen so that the sum of the
    distances from the slots is smallest (dynamic programming over how many were skipped
    so far)."""
    count = len(offsets)
    shifts = np.arange(skipped + 1)
    cost = np.abs(offsets[0] - shifts)
    choice = np.zeros((count, skipped + 1), dtype=np.int32)
    for index in range(1, count):
        best_before = np.minimum.accumulate(cost)
        choice[index] = _argmin_prefix(cost)
        cost = best_before + np.abs(offsets[index] - (index + shifts))
    shift = int(np.argmin(cost)) if skipped else 0
    slots = np.empty(count, dtype=np.int64)
    for index in range(count - 1, -1, -1):
        slots[index] = index + shift
        shift = int(choice[index][shift]) if index else shift
    return slots


def _argmin_prefix(values: np.ndarray) -> np.ndarray:
    """For every position, where the smallest value up to it sits."""
    where = np.arange(len(values))
    best = np.minimum.accumulate(values)
    is_new = values <= best
    return np.maximum.accumulate(np.where(is_new, where, 0)).astype(np.int32)


@dataclass(frozen=True)
class Lateness:
    """How long after its intended start each arrival in the window reached the server
    (µs): p50 and p99, of how many."""

    arrivals: int
    p50_us: float
    p99_us: float


def lateness(
    arrivals_ns: Sequence[int],
    origin_ns: int,
    rate: float,
    start_ns: int,
    end_ns: int,
    sent: int,
) -> Lateness | str:
    """The arrivals of a whole run of a constant ``rate`` whose ``k``-th start was meant
    for ``origin_ns + k / rate``, matched in order (the ``k``-th arrival is the ``k``-th
    start: a generator that sends in order and dropped none), judged in
    ``[start_ns, end_ns)``. Where the count of arrivals is not the count the generator
    ``sent``, the order says nothing: the reason, not a figure."""
    if len(arrivals_ns) != sent:
        return f"{len(arrivals_ns):,} arrivals for {sent:,} starts sent: not matched"
    times = np.sort(np.asarray(arrivals_ns, dtype=np.int64))
    intended = origin_ns + np.round(np.arange(len(times)) * (1e9 / rate)).astype(np.int64)
    inside = (times >= start_ns) & (times < end_ns)
    late = (times[inside] - intended[inside]) / 1000
    if len(late) < 2:
        return f"{len(late)} arrivals in the window: nothing to judge"
    return Lateness(
        arrivals=len(late),
        p50_us=float(np.percentile(late, 50)),
        p99_us=float(np.percentile(late, 99)),
    )


def punctuality(arrivals_ns: Sequence[int], rate: float, start_ns: int, end_ns: int) -> Punctuality:
    """The arrivals in ``[start_ns, end_ns)`` against the even grid of ``rate`` per second.

    The phase is fitted twice: on the folded arrivals (which slots fall in the window, and
    so how many may have had no arrival), then, once each arrival has its slot, as the shorth of
    their distances (the grid the arrivals keep best)."""
    period = 1e9 / rate
    inside = [t for t in arrivals_ns if start_ns <= t < end_ns]
    if len(inside) < 2:
        raise ValueError(f"{len(inside)} arrivals in the window: nothing to judge")
    times = np.sort(np.asarray(inside, dtype=np.int64))
    origin = int(times[0])
    relative = (times - origin).astype(np.float64)
    phase = circular_phase(relative, period)
    first = math.ceil((start_ns - origin - phase) / period)
    slots_in_window = math.ceil((end_ns - origin - phase) / period) - first
    allowed = min(max(slots_in_window - len(times), 0) + EDGE_SLOTS, MAX_SKIPPED)
    slots = match_slots((relative - phase) / period - first, allowed)
    residual = relative - phase - (slots + first) * period
    residual -= shorth_centre(residual)
    deviation = np.abs(residual) / 1000
    return Punctuality(
        arrivals=len(times),
        slots=max(slots_in_window, len(times)),
        skipped=int(slots[-1] - slots[0]) + 1 - len(times),
        deviation_p50_us=float(np.percentile(deviation, 50)),
        deviation_p99_us=float(np.percentile(deviation, 99)),
        lateness_p99_us=float(np.percentile(residual / 1000, 99)),
    )


__all__ = [
    "MAX_SKIPPED",
    "Lateness",
    "Punctuality",
    "circular_phase",
    "lateness",
    "match_slots",
    "punctuality",
    "shorth_centre",
]
