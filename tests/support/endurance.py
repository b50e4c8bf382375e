"""Per-second histograms of known latencies, for the drift tests: a run second by second as
the timeline merges it (second of the run → every row's histogram of that second)."""

from __future__ import annotations

from collections.abc import Callable

from hdrh.histogram import HdrHistogram

from authzkit.loadtest.record.timeline import new_second_histogram


def second_of(*groups: tuple[int, int]) -> HdrHistogram:
    """One second's histogram: ``(count, µs)`` groups."""
    histogram = new_second_histogram()
    for count, micros in groups:
        histogram.record_value(micros, count)
    return histogram


def run_of(
    seconds: int, micros: Callable[[int], int], per_second: int = 100
) -> dict[int, HdrHistogram]:
    """Seconds 0 … ``seconds`` (the last one is the partial one a run ends in), each
    ``per_second`` calls of ``micros(second)`` µs."""
    return {s: second_of((per_second, micros(s))) for s in range(seconds + 1)}
