"""Second-by-second latency: p50 and p99 of the requests that completed in each second.

Why: Locust's history is a sliding 10 s window in whole milliseconds. Wall-clock seconds,
so processes' seconds merge exactly; 2 significant digits. Free of locust
(docs/internals.md, "Second by second").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from hdrh.histogram import HdrHistogram

from authzkit.loadtest import percentiles
from authzkit.loadtest.record.histograms import (
    AGGREGATED,
    HIGHEST_US,
    LOWEST_US,
    LatencyRecorder,
    as_micros,
    encode,
    merge,
    record_micros,
    row_key,
    values_at,
)

TIMELINE_FILE = "timeline.json"
SIGNIFICANT_FIGURES = 2
COLUMNS = ("second", "row", "count", *map(percentiles.key, percentiles.PER_SECOND), "max")


def new_second_histogram() -> HdrHistogram:
    """An empty histogram for one row's second (1 µs … 60 s, 2 significant digits)."""
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)


class SecondRecorder:
    """One process's per-second response times: the current second's, buffered per row,
    and the encodings of the seconds before it.

    A request only appends its time to its row's buffer (one comparison tells whether a
    new second began); the buffers become histograms in bulk
    (:func:`~authzkit.loadtest.record.histograms.record_micros`) when drained, a second
    that is over set aside until then. Given the run's recorder (``run``), a drained
    second's times also go into the run's histograms from the same buffer, converted to
    microseconds once: one append per request feeds both, which is what a request costs
    the listener. Not locked: Locust's users are greenlets and neither recording nor
    draining yields."""

    def __init__(self, run: LatencyRecorder | None = None) -> None:
        self._run = run
        self._second: int | None = None
        self._until = float("-inf")  # the current second ends here (epoch seconds)
        self._live: dict[tuple[str, str], list[float]] = {}
        self._closed: list[tuple[int, dict[tuple[str, str], list[float]]]] = []
        self._done: dict[int, dict[str, str]] = {}
        self._failed: dict[int, int] = {}  # second -> failed requests (the drift's ratio)

    def record(
        self,
        request_type: str,
        name: str,
        millis: float | None,
        completed_at: float,
        failed: bool = False,
    ) -> None:
        """Count one request of a row in the second it completed (``completed_at``, epoch
        seconds), and in that second's failures when it ``failed``. A clock stepping back
        files it in the current second: seconds only move forward, so a finished second is
        never reopened."""
        if millis is None:
            return
        if completed_at >= self._until:
            self._close()
            second = int(completed_at // 1)
            self._second, self._until = second, second + 1.0
        if failed and self._second is not None:
            self._failed[self._second] = self._failed.get(self._second, 0) + 1
        key = (request_type, name)
        pending = self._live.get(key)
        if pending is None:
            pending = self._live[key] = []
        pending.append(millis)

    def _close(self) -> None:
        """The current second's buffers set aside, encoded at the next drain: not by the
        request that opens the next second (a millisecond the schedule would wait for)."""
        if self._second is not None and self._live:
            self._closed.append((self._second, self._live))
        self._live = {}

    def drain(self) -> dict[str, dict[str, str]]:
        """Every second recorded since the last drain, the current one included (as far as
        it got), as ``{"<epoch second>": {row: encoding}}``, the run's histograms fed with
        them; then forget them. The rest of a drained current second arrives with the next
        drain and merges with it."""
        self._close()
        for second, live in self._closed:
            rows = {row_key(*key): as_micros(values) for key, values in live.items()}
            self._done[second] = {row: _encoded(rows[row]) for row in sorted(rows)}
            if self._run is not None:
                for row, micros in rows.items():
                    self._run.add_micros(row, micros)
        self._closed = []
        found = {str(second): rows for second, rows in sorted(self._done.items())}
        self._done = {}
        return found

    def drain_failures(self) -> dict[str, int]:
        """The failed requests of every second since the last call, ``{"<epoch second>":
        count}``; then forget them (a worker sends them beside :meth:`drain`)."""
        found = {str(second): count for second, count in sorted(self._failed.items())}
        self._failed = {}
        return found

    def reset(self) -> None:
        """Forget everything (a new test, or Locust's stats were reset)."""
        self._second = None
        self._until = float("-inf")
        self._live = {}
        self._closed = []
        self._done = {}
        self._failed = {}


def _encoded(micros: npt.NDArray[np.int64]) -> str:
    """One row's second: its times in a new per-second histogram, encoded."""
    histogram = new_second_histogram()
    record_micros(histogram, micros)
    return encode(histogram)


class TimelineMerger:
    """Drains of one or many processes, merged exactly into per-second percentiles.

    Keeps the encodings as they came (a few hundred bytes each) and decodes them once, in
    :meth:`table`, so a master receiving an hour of seconds from many workers holds
    megabytes, not a live histogram per second."""

    def __init__(self) -> None:
        self._parts: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._failed: dict[int, int] = defaultdict(int)

    def add(
        self,
        drained: Mapping[str, Mapping[str, str]] | None,
        failures: Mapping[str, int] | None = None,
    ) -> None:
        """Take one :meth:`SecondRecorder.drain` (from this process or a worker's report),
        and its :meth:`~SecondRecorder.drain_failures`."""
        for second, rows in (drained or {}).items():
            for row, text in rows.items():
                self._parts[int(second)][row].append(text)
        for second, count in (failures or {}).items():
            self._failed[int(second)] += int(count)

    def reset(self) -> None:
        self._parts.clear()
        self._failed.clear()

    def recent(self, seconds: int = 2) -> dict[str, int]:
        """The count, p50 and p99 (µs) of the last ``seconds`` whole seconds merged so far,
        the newest second (still filling) left out: the progress line's latest p99 (and the
        notebook's live view's p50 and p99)."""
        if len(self._parts) < 2:
            return {"recent_count": 0, "recent_p99_us": 0}
        newest = max(self._parts)
        histogram = merge(
            (
                text
                for second in range(newest - seconds, newest)
                for texts in self._parts.get(second, {}).values()
                for text in texts
            ),
            figures=SIGNIFICANT_FIGURES,
        )
        count = int(histogram.get_total_count())
        values = values_at(histogram, [50.0, 99.0])
        return {"recent_count": count, "recent_p50_us": values[50.0], "recent_p99_us": values[99.0]}

    def seconds(self) -> tuple[dict[int, HdrHistogram], dict[int, int]]:
        """Every row merged, second by second, counted from the first second (0), and the
        failures of each second: what the drift is judged on
        (:func:`~authzkit.loadtest.record.drift.judge`)."""
        if not self._parts:
            return {}, {}
        start = min(self._parts)
        merged = {
            second - start: merge(
                (text for texts in rows.values() for text in texts), figures=SIGNIFICANT_FIGURES
            )
            for second, rows in sorted(self._parts.items())
        }
        failed = {second - start: n for second, n in self._failed.items() if second >= start}
        return merged, failed

    def table(self) -> dict[str, Any]:
        """``timeline.json``'s content: ``start`` (the first second, epoch) and one record per
        second and row (``second`` counted from ``start``; ``count``, ``p50``, ``p99``,
        ``max`` in µs), the ``Aggregated`` row of every row merged included."""
        if not self._parts:
            return {"start": None, "unit": "us", "records": []}
        start = min(self._parts)
        records = []
        for second in sorted(self._parts):
            merged = {
                row: merge(texts, figures=SIGNIFICANT_FIGURES)
                for row, texts in sorted(self._parts[second].items())
            }
            merged[AGGREGATED] = merge(merged.values(), figures=SIGNIFICANT_FIGURES)
            for row, histogram in merged.items():
                records.append(_record(second - start, row, histogram))
        return {"start": start, "unit": "us", "records": records}


def _record(second: int, row: str, histogram: HdrHistogram) -> dict[str, Any]:
    values = values_at(histogram, percentiles.PER_SECOND)
    found = {percentiles.key(p): values[p] for p in percentiles.PER_SECOND}
    return {
        "second": second,
        "row": row,
        "count": int(histogram.get_total_count()),
        **found,
        "max": int(histogram.get_max_value()),
    }


__all__ = [
    "COLUMNS",
    "SIGNIFICANT_FIGURES",
    "TIMELINE_FILE",
    "SecondRecorder",
    "TimelineMerger",
    "new_second_histogram",
]
