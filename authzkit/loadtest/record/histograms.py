"""Latency histograms: every request's response time in microseconds, per Locust row, and
:func:`merge`, the one merge of a run's histograms.

Why: Locust's millisecond buckets blur the 1 to 10 ms an authorization lives in. Free of
locust (docs/internals.md, "Latency histograms and the one merge").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt
from hdrh.histogram import HdrHistogram

from authzkit.loadtest.percentiles import SUMMARY, key as percentile_key

log = logging.getLogger(__name__)

LOWEST_US = 1
HIGHEST_US = 60_000_000  # 60 s: longer answers are recorded as 60 s (counted, never dropped)
SIGNIFICANT_FIGURES = 3
AGGREGATED = "Aggregated"
# A row's buffered response times are put into its histogram at the latest after this many
# (and whenever the histograms are read or drained): bounded memory for a lone process
# that never drains before exit, and few enough flushes that each stays cheap per value.
FLUSH_EVERY = 4096
# summary.json's key → the percentile HdrHistogram is asked for.
PERCENTILE_KEYS: dict[str, float] = {percentile_key(p): p for p in SUMMARY}


def new_histogram() -> HdrHistogram:
    """An empty microsecond histogram (1 µs … 60 s, 3 significant digits)."""
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)


def to_microseconds(millis: float) -> int:
    """A Locust response time (float milliseconds) as whole microseconds within the
    trackable range: a sub-microsecond time counts as 1 µs, anything past 60 s as 60 s, so
    the histogram's count always equals the number of requests."""
    return min(max(round(millis * 1000), LOWEST_US), HIGHEST_US)


def record_millis(histogram: HdrHistogram, millis: Sequence[float]) -> None:
    """Record many Locust response times (float ms) at once, exactly as one
    ``histogram.record_value(to_microseconds(m))`` per value would."""
    record_micros(histogram, as_micros(millis))


def as_micros(millis: Sequence[float]) -> npt.NDArray[np.int64]:
    """Locust's float milliseconds as whole microseconds, rounded as :func:`round` rounds
    (half to even), not yet clamped."""
    return np.rint(np.asarray(millis, dtype=np.float64) * 1000.0).astype(np.int64)


def record_micros(histogram: HdrHistogram, micros: Sequence[int] | npt.NDArray[np.int64]) -> None:
    """Record many whole-microsecond values at once (each clamped to 1 µs … 60 s), exactly
    as one ``histogram.record_value`` per value would: same counts, total, minimum and
    maximum (tests/loadtest/test_histograms.py compares the encodings).

    Why not one ``record_value`` per request: hdrh's is pure Python (seven calls a value),
    and even a Python loop over the distinct values of a second cost a request about 1 %
    of what Locust spends on it. Here hdrh's own index arithmetic (``_counts_index_for``:
    the bucket is the bit length of ``value | sub_bucket_mask``) runs over the whole batch
    in numpy, and the counts are added in place to the histogram's counts array.
    """
    values = np.clip(np.asarray(micros, dtype=np.int64), LOWEST_US, HIGHEST_US)
    if not values.size:
        return
    unit = histogram.unit_magnitude
    half_magnitude = histogram.sub_bucket_half_count_magnitude
    # frexp's exponent of a positive integer below 2**53 is its bit length, exactly.
    bucket = np.frexp(values | histogram.sub_bucket_mask)[1] - (unit + half_magnitude + 1)
    index = ((bucket + 1) << half_magnitude) + (values >> (bucket + unit))
    index -= histogram.sub_bucket_half_count
    counts = np.frombuffer(histogram.counts, dtype=np.uint64)
    counts += np.bincount(index, minlength=counts.size).astype(np.uint64)
    histogram.total_count += int(values.size)
    histogram.min_value = min(histogram.min_value, int(values.min()))
    histogram.max_value = max(histogram.max_value, int(values.max()))


def merged_percentiles(
    histograms: Iterable[HdrHistogram], percents: Sequence[float]
) -> dict[float, int]:
    """Percentile → µs of every value of ``histograms`` together (as :func:`merge` then
    ``get_value_at_percentile`` would answer, exactly), without building the merge or
    walking its counts in Python: the counts arrays are summed and searched in numpy, cheap
    enough for a live figure once a second inside the generator. Zeros when empty."""
    found = list(histograms)
    if not found:
        return {percent: 0 for percent in percents}
    first = found[0]
    counts = np.zeros(first.counts_len, dtype=np.uint64)
    for histogram in found:
        counts += np.frombuffer(histogram.counts, dtype=np.uint64)[: first.counts_len]
    total = int(counts.sum())
    if not total:
        return {percent: 0 for percent in percents}
    running = np.cumsum(counts)
    values = {}
    for percent in percents:
        target = max(int(percent * total / 100 + 0.5), 1)  # hdrh's target count
        index = int(np.searchsorted(running, target))
        value = first.get_value_from_index(index)
        values[percent] = int(
            first.get_highest_equivalent_value(value)
            if percent
            else first.get_lowest_equivalent_value(value)
        )
    return values


def values_at(histogram: HdrHistogram, percents: Sequence[float]) -> dict[float, int]:
    """Percentile → µs of ``histogram``, exactly as its ``get_value_at_percentile`` answers
    (zeros when empty): hdrh walks every bucket in Python for each percentile asked, a
    thousand times slower than one cumulative sum."""
    return merged_percentiles([histogram], percents)


def row_key(request_type: str, name: str) -> str:
    """The row a request belongs to, as summary.json names it: ``"<type> <name>"``."""
    return f"{request_type} {name}"


def encode(histogram: HdrHistogram) -> str:
    """HdrHistogram's compressed encoding as base64 text (JSON- and message-safe)."""
    encoded: bytes = histogram.encode()
    return encoded.decode("ascii")


def decode(text: str | bytes) -> HdrHistogram:
    """A histogram back from :func:`encode`'s text; a ``ValueError`` naming the problem
    when the text is not an HdrHistogram encoding."""
    raw = text.encode("ascii") if isinstance(text, str) else text
    try:
        return HdrHistogram.decode(raw)
    except Exception as exc:  # the codec raises anything from binascii to zlib errors
        raise ValueError(f"not an HdrHistogram compressed encoding ({exc})") from exc


def merge(
    histograms: Iterable[HdrHistogram | str], *, figures: int = SIGNIFICANT_FIGURES
) -> HdrHistogram:
    """One histogram holding every value of ``histograms`` (count = the sum of theirs),
    each given live or as :func:`encode`'s text, kept to ``figures`` significant digits:
    the one merge of a run's histograms (the master's, the timeline's seconds, the drift's
    windows, a capacity step's processes)."""
    merged = HdrHistogram(LOWEST_US, HIGHEST_US, figures)
    for histogram in histograms:
        merged.add(decode(histogram) if isinstance(histogram, str) else histogram)
    return merged


def aggregate(histograms: Mapping[str, HdrHistogram]) -> HdrHistogram:
    """Every row's values but an ``Aggregated`` row's merged: the run's ``Aggregated``."""
    return merge(h for row, h in histograms.items() if row != AGGREGATED)


def percentiles(histogram: HdrHistogram) -> dict[str, int]:
    """``{"count", "p50", "p90", "p99", "p99.9", "max"}`` in microseconds (zeros when empty)."""
    found = {"count": int(histogram.get_total_count())}
    values = values_at(histogram, list(PERCENTILE_KEYS.values()))
    for key, percent in PERCENTILE_KEYS.items():
        found[key] = values[percent]
    found["max"] = int(histogram.get_max_value()) if found["count"] else 0
    return found


def latency_summary(histograms: Mapping[str, HdrHistogram]) -> dict[str, dict[str, int]]:
    """summary.json's ``latency_us``: :func:`percentiles` per row, sorted, plus the
    ``Aggregated`` row of all of them merged."""
    rows = {row: percentiles(histograms[row]) for row in sorted(histograms) if row != AGGREGATED}
    if rows:
        rows[AGGREGATED] = percentiles(aggregate(histograms))
    return rows


def encode_rows(histograms: Mapping[str, HdrHistogram]) -> dict[str, str]:
    """``histograms.json``'s content: every non-empty row in compressed encoding, sorted,
    plus the ``Aggregated`` row (the same keys as summary.json's ``latency_us``)."""
    rows = {
        row: histograms[row]
        for row in sorted(histograms)
        if row != AGGREGATED and histograms[row].get_total_count()
    }
    found = {row: encode(histogram) for row, histogram in rows.items()}
    if found:
        found[AGGREGATED] = encode(merge(rows.values()))
    return found


class LatencyRecorder:
    """One process's histograms, row → :class:`HdrHistogram`, fed one request at a time.

    :meth:`record` only appends the time to its row's buffer (what a request costs the
    generator must stay a small fraction of what Locust itself spends on it); the buffers
    go into the histograms in bulk (:func:`record_millis`) every :data:`FLUSH_EVERY`
    values of a row and before anything reads them (:attr:`histograms`, :meth:`drain`).
    Not locked: Locust's users are greenlets and neither recording nor flushing yields. A worker
    :meth:`drain`\\ s what it recorded since its last report into a custom message sent right
    before Locust's own stats report (so both count the same requests); the master
    :meth:`add_encoded`\\ s every such message.
    """

    def __init__(self) -> None:
        self._rows: dict[str, HdrHistogram] = {}
        self._pending: dict[tuple[str, str], list[float]] = {}

    def _row(self, row: str) -> HdrHistogram:
        histogram = self._rows.get(row)
        if histogram is None:
            histogram = self._rows[row] = new_histogram()
        return histogram

    def record(self, request_type: str, name: str, millis: float | None) -> None:
        """Count one request of a row; a request without a time (Locust allows ``None``)
        is not a latency and is left out."""
        if millis is None:
            return
        key = (request_type, name)  # a tuple, not row_key's string: no text built per request
        pending = self._pending.get(key)
        if pending is None:
            pending = self._pending[key] = []
        pending.append(millis)
        if len(pending) >= FLUSH_EVERY:
            self._flush()

    def add_micros(self, row: str, micros: npt.NDArray[np.int64]) -> None:
        """Count many whole-microsecond times of ``row`` (``"<type> <name>"``) at once: a
        closed second of the timeline (:class:`~authzkit.loadtest.record.timeline.SecondRecorder`)
        hands its buffer over, so each request is appended once for both."""
        record_micros(self._row(row), micros)

    def _flush(self) -> None:
        """Put every buffered time into its row's histogram."""
        for (request_type, name), pending in self._pending.items():
            if pending:
                record_millis(self._row(row_key(request_type, name)), pending)
                pending.clear()

    def drain(self) -> dict[str, str]:
        """Every non-empty row in compressed encoding, then forget them: what a worker
        sends with each report (a delta, like Locust's own stats)."""
        self._flush()
        found = {row: encode(h) for row, h in sorted(self._rows.items()) if h.get_total_count()}
        self.reset()
        return found

    def add_encoded(self, encoded: Mapping[str, str]) -> None:
        """Merge a worker's :meth:`drain` into this recorder (exact: counts add up)."""
        for row, text in encoded.items():
            self._rows[row] = merge([self._row(row), text])

    def reset(self) -> None:
        """Forget every row (a new test, or Locust's stats were reset)."""
        self._rows.clear()
        self._pending.clear()

    @property
    def histograms(self) -> dict[str, HdrHistogram]:
        """Row → histogram, everything recorded so far included (a copy of the mapping;
        the histograms themselves are live until the next :meth:`record`)."""
        self._flush()
        return dict(self._rows)


class EncodedHistograms(Mapping[str, HdrHistogram]):
    """Row → histogram read from ``histograms.json``, each decoded on first access (a
    notebook asking for one row's spectrum does not decode them all)."""

    def __init__(self, encoded: Mapping[str, str]) -> None:
        self._encoded = dict(encoded)
        self._decoded: dict[str, HdrHistogram] = {}

    def __getitem__(self, row: str) -> HdrHistogram:
        if row not in self._decoded:
            try:
                text = self._encoded[row]
            except KeyError:
                raise KeyError(f"no histogram for row {row!r}") from None
            self._decoded[row] = decode(text)
        return self._decoded[row]

    def __iter__(self) -> Iterator[str]:
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)

    def __repr__(self) -> str:
        return f"EncodedHistograms(rows={list(self._encoded)!r})"


__all__ = [
    "AGGREGATED",
    "FLUSH_EVERY",
    "HIGHEST_US",
    "LOWEST_US",
    "PERCENTILE_KEYS",
    "SIGNIFICANT_FIGURES",
    "EncodedHistograms",
    "LatencyRecorder",
    "aggregate",
    "as_micros",
    "decode",
    "encode",
    "encode_rows",
    "latency_summary",
    "merge",
    "merged_percentiles",
    "new_histogram",
    "percentiles",
    "record_micros",
    "record_millis",
    "row_key",
    "to_microseconds",
    "values_at",
]
