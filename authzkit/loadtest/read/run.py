"""A load-test run read back from its directory: :func:`load_run` and the :class:`RunResults`
it returns (the data; :class:`authzkit.loadtest.Run` is the live handle that holds them).

The rows count what ``summary.json`` counted when Locust's ``stats.json`` disagrees, so the
terminal, the report and ``authzkit report`` count what the verdict did. The files read:
docs/internals.md, "A run read back".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from authzkit.loadtest import percentiles
from authzkit.loadtest.record.histograms import EncodedHistograms, values_at
from authzkit.loadtest.record.summary import HISTOGRAM_FILE, SERVICE_HISTOGRAM_FILE
from authzkit.loadtest.record.timeline import COLUMNS as SECOND_COLUMNS, TIMELINE_FILE

PERCENTILES = tuple(p / 100 for p in percentiles.LOCUST)  # fractions, for nearest rank
PERCENTILE_COLUMNS = tuple(map(percentiles.key, percentiles.LOCUST))
AGGREGATED = "Aggregated"
TOKEN_ROW = "token"
_ERROR_TYPE = re.compile(r"srn:error:[\w.:-]+")
_HTTP_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_EXCEPTION = re.compile(r"^(\w+(?:Error|Exception|Timeout))\b")


def _read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def percentile(histogram: dict[float, int], fraction: float) -> float:
    """The response time (ms) that ``fraction`` of the requests finished within (nearest rank)."""
    total = sum(histogram.values())
    if total == 0:
        return float("nan")
    rank, seen = fraction * total, 0
    for millis in sorted(histogram):
        seen += histogram[millis]
        if seen >= rank:
            return float(millis)
    return float(max(histogram))


def failure_kind(message: str) -> str:
    """The kind of a failure message: the service's ``srn:error:…``, else ``HTTP <status>``,
    else the exception's class name, else the message itself."""
    text = str(message)
    found = _ERROR_TYPE.search(text)
    if found:
        return found.group(0)
    inner = re.sub(r"^\w+\((['\"])(.*)\1\)$", r"\2", text)  # RequestFailure('…') → …
    status = _HTTP_STATUS.search(inner)
    if status:
        return f"HTTP {status.group(1)}"
    name = _EXCEPTION.match(inner)
    return name.group(1) if name else inner


_ROW_COLUMNS = [
    "type",
    "name",
    "requests",
    "failures",
    "failure_ratio",
    "rps",
    "mean_ms",
    *PERCENTILE_COLUMNS,
    "max_ms",
]


def _run_seconds(entries: list[dict[str, Any]]) -> float:
    """The span the rows' requests cover together (first start to last request), at least
    one second: every row's throughput is over this same span, so a row with one request
    in a 15 s run reads 0.07/s, not 1/s over its own zero-length span."""
    starts = [e.get("start_time") or 0.0 for e in entries]
    ends = [e.get("last_request_timestamp") or 0.0 for e in entries]
    return max(max(ends, default=0.0) - min(starts, default=0.0), 1.0)


def _row_table(entries: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (type, name) plus the ``Aggregated`` row, from ``stats.json``."""
    records: list[dict[str, Any]] = []
    merged: dict[float, int] = {}
    seconds = _run_seconds(entries)
    for entry in entries:
        histogram = {float(k): int(v) for k, v in entry.get("response_times", {}).items()}
        for millis, count in histogram.items():
            merged[millis] = merged.get(millis, 0) + count
        records.append(_record(entry["method"], entry["name"], entry, histogram, seconds))
    if records:
        total = {
            k: sum(e.get(k) or 0 for e in entries)
            for k in ("num_requests", "num_failures", "total_response_time")
        }
        total["max_response_time"] = max(e.get("max_response_time") or 0 for e in entries)
        records.append(_record("", AGGREGATED, total, merged, seconds))
    return pd.DataFrame.from_records(records, columns=_ROW_COLUMNS)


def _record(
    kind: str, name: str, entry: dict[str, Any], histogram: dict[float, int], duration: float
) -> dict[str, Any]:
    requests, failures = int(entry["num_requests"]), int(entry["num_failures"])
    record = {
        "type": kind,
        "name": name,
        "requests": requests,
        "failures": failures,
        "failure_ratio": failures / max(requests + (0 if requests else failures), 1),
        "rps": requests / duration,
        "mean_ms": entry["total_response_time"] / requests if requests else float("nan"),
        "max_ms": float(entry.get("max_response_time") or 0.0),
    }
    for fraction, column in zip(PERCENTILES, PERCENTILE_COLUMNS, strict=True):
        record[column] = percentile(histogram, fraction)
    return record


def _stats_total(entries: list[dict[str, Any]]) -> int:
    return sum(int(e.get("num_requests") or 0) for e in entries)


def _recorded_rows(summary: Mapping[str, Any]) -> dict[str, int]:
    """Row → requests of summary.json's ``latency_us`` (its ``Aggregated`` left out)."""
    latency = summary.get("latency_us") or {}
    return {
        row: int(figures.get("count") or 0)
        for row, figures in latency.items()
        if row != AGGREGATED and " " in row and isinstance(figures, Mapping)
    }


def _summary_rows(
    summary: Mapping[str, Any], histograms: Mapping[str, Any], seconds: float | None
) -> pd.DataFrame:
    """The rows as summary.json recorded them: each row's requests (its histogram's count),
    its failures (summary.json's failures of that row) and Locust's millisecond percentiles
    read from the µs histograms (from ``latency_us`` without them; no mean: it was not
    recorded). Throughput is over the run's ``seconds`` of load (``run_s``)."""
    failed: dict[tuple[str, str], int] = {}
    for error in summary.get("failures") or []:
        key = (str(error.get("type")), str(error.get("name")))
        failed[key] = failed.get(key, 0) + int(error.get("occurrences") or 0)
    latency = summary.get("latency_us") or {}
    duration = max(seconds, 1.0) if seconds else float("nan")  # no rate without a duration
    records = []
    for row, count in _recorded_rows(summary).items():
        kind, name = row.split(" ", 1)
        figures = latency[row]
        entry = {
            "num_requests": count,
            "num_failures": failed.get((kind, name), 0),
            "total_response_time": float("nan"),
            "max_response_time": float(figures.get("max") or 0) / 1000,
        }
        records.append(_summary_record(kind, name, entry, histograms.get(row), figures, duration))
    if records:
        total = {
            "num_requests": sum(r["requests"] for r in records),
            "num_failures": sum(r["failures"] for r in records),
            "total_response_time": float("nan"),
            "max_response_time": max(r["max_ms"] for r in records),
        }
        figures = latency.get(AGGREGATED) or {}
        records.append(
            _summary_record("", AGGREGATED, total, histograms.get(AGGREGATED), figures, duration)
        )
    return pd.DataFrame.from_records(records, columns=_ROW_COLUMNS)


def _summary_record(
    kind: str,
    name: str,
    entry: dict[str, Any],
    histogram: Any,
    figures: Mapping[str, Any],
    duration: float,
) -> dict[str, Any]:
    record = _record(kind, name, entry, {}, duration)
    record["mean_ms"] = float("nan")
    if histogram is not None and histogram.get_total_count():
        values = values_at(histogram, list(percentiles.LOCUST))
        for percent, column in zip(percentiles.LOCUST, PERCENTILE_COLUMNS, strict=True):
            record[column] = values[percent] / 1000
    else:
        for column in PERCENTILE_COLUMNS:
            value = figures.get(column)
            record[column] = float(value) / 1000 if value is not None else float("nan")
    return record


def _load_seconds(
    summary: Mapping[str, Any], meta: Mapping[str, Any], seconds: pd.DataFrame
) -> float | None:
    """The run's seconds of load for rows counted from summary.json: its ``run_s``, else the
    seconds timeline.json spans, else run.json's start to finish; None when none says."""
    measured = summary.get("run_s")
    if isinstance(measured, int | float) and measured > 0:
        return float(measured)
    if not seconds.empty:
        return float(seconds["second"].max() - seconds["second"].min() + 1)
    return meta_seconds(meta) or None


def meta_seconds(meta: Mapping[str, Any]) -> float | None:
    """run.json's ``started_at`` to ``finished_at`` in seconds (whole seconds, the
    sandbox's start and the shutdown included); None when either is missing."""
    try:
        started = datetime.fromisoformat(str(meta["started_at"]))
        finished = datetime.fromisoformat(str(meta["finished_at"]))
    except (KeyError, ValueError):
        return None
    return max((finished - started).total_seconds(), 0.0)


def _counted_by_summary(entries: list[dict[str, Any]], summary: Mapping[str, Any]) -> bool:
    """Whether the rows come from summary.json: it recorded requests per row and
    ``stats.json`` holds another total (``[]`` after an interrupt, or short)."""
    recorded = _recorded_rows(summary)
    return bool(sum(recorded.values())) and _stats_total(entries) != sum(recorded.values())


def _per_second(entries: list[dict[str, Any]]) -> pd.DataFrame:
    """Requests and failures per wall-clock second and row (exact, from ``stats.json``)."""
    records = []
    for entry in entries:
        failed = entry.get("num_fail_per_sec", {})
        for second, count in entry.get("num_reqs_per_sec", {}).items():
            records.append(
                {
                    "second": int(float(second)),
                    "type": entry["method"],
                    "name": entry["name"],
                    "requests": int(count),
                    "failures": int(failed.get(second, 0)),
                }
            )
    frame = pd.DataFrame.from_records(
        records, columns=["second", "type", "name", "requests", "failures"]
    )
    frame["elapsed_s"] = frame["second"] - (frame["second"].min() if len(frame) else 0)
    return frame.sort_values(["second", "type", "name"], ignore_index=True)


@dataclass(frozen=True)
class RunResults:
    """What one load-test run measured, read back from its directory."""

    directory: Path
    rows: pd.DataFrame
    per_second: pd.DataFrame
    history: pd.DataFrame
    failures: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    sandbox_stats: dict[str, Any] | None = None
    # Row ("<type> <name>", and "Aggregated") → microsecond HdrHistogram, decoded on first
    # access; empty for a run recorded before histograms existed.
    histograms: EncodedHistograms = field(default_factory=lambda: EncodedHistograms({}))
    # The same for service times (from the actual send; open model only), else empty.
    service_times: EncodedHistograms = field(default_factory=lambda: EncodedHistograms({}))
    # timeline.json: one record per second and row (second, row, count, p50, p99, max in
    # µs); empty for a run recorded before it existed.
    seconds: pd.DataFrame = field(default_factory=pd.DataFrame)

    def row(self, name: str, kind: str | None = None) -> pd.Series:
        """The stats row called ``name`` (and of request type ``kind`` when given)."""
        mask = self.rows["name"] == name
        if kind is not None:
            mask &= self.rows["type"] == kind
        found = self.rows[mask]
        if found.empty:
            raise KeyError(f"no row {name!r} in {self.directory}")
        return found.iloc[0]

    @property
    def token_calls(self) -> int:
        """Token calls: the sandbox's own count when known, else the ``token`` row's."""
        if self.sandbox_stats and "tokens_issued" in self.sandbox_stats:
            return int(self.sandbox_stats["tokens_issued"])
        rows = self.rows[self.rows["name"] == TOKEN_ROW]
        return int(rows["requests"].sum())


def _histogram_files(directory: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Row → encoding of the response times and of the service times, whichever way the run
    stored them: ``histograms.json`` flat (row → text) or nested (``{"latency": {…},
    "service_time": {…}}``), service times possibly in ``service_histograms.json``."""
    stored = _read_json(directory / HISTOGRAM_FILE, {}) or {}
    nested = bool(stored) and all(isinstance(v, Mapping) for v in stored.values())
    latency = dict(stored.get("latency", {})) if nested else dict(stored)
    service = dict(stored.get("service_time", {})) if nested else {}
    service = service or dict(_read_json(directory / SERVICE_HISTOGRAM_FILE, {}) or {})
    return latency, service


def _read_history(path: Path) -> pd.DataFrame:
    """Locust's per-interval history; empty when absent, or when a run interrupted at its
    very start left the file created but not yet written."""
    try:
        return pd.read_csv(path, na_values=["N/A"])
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return pd.DataFrame()


def load_run(directory: str | Path) -> RunResults:
    """Read a run directory; a ``FileNotFoundError`` when it holds neither ``stats.json``
    nor ``run.json``. With ``run.json`` alone (a run interrupted, or refused by locust,
    before locust wrote its numbers) the run has no rows: its report says why."""
    directory = Path(directory)
    stats_path = directory / "stats.json"
    if not stats_path.exists() and not (directory / "run.json").exists():
        raise FileNotFoundError(f"{directory} holds no stats.json: not a load-test run directory")
    entries = _read_json(stats_path, [])
    history_path = directory / "locust_stats_history.csv"
    history = _read_history(history_path)
    summary = _read_json(directory / "summary.json", {})
    failures = pd.DataFrame.from_records(
        summary.get("failures", []), columns=["type", "name", "error", "occurrences"]
    )
    failures["error_type"] = failures["error"].map(failure_kind)
    latency, service = _histogram_files(directory)
    histograms = EncodedHistograms(latency)
    meta, seconds = _today(_read_json(directory / "run.json", {})), _seconds(directory)
    rows = _row_table(entries)
    if _counted_by_summary(entries, summary):
        rows = _summary_rows(summary, histograms, _load_seconds(summary, meta, seconds))
    return RunResults(
        directory=directory,
        rows=rows,
        per_second=_per_second(entries),
        history=history,
        failures=failures,
        meta=meta,
        summary=summary,
        sandbox_stats=_read_json(directory / "sandbox_stats.json"),
        histograms=histograms,
        service_times=EncodedHistograms(service),
        seconds=seconds,
    )


def _today(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json with today's keys: a run written before held Locust's command line in
    ``command`` (now ``locust_command``; ``command`` names the authzkit command)."""
    written = meta.get("command")
    if isinstance(written, list):
        return {**meta, "command": "loadtest", "locust_command": written}
    return meta


def _seconds(directory: Path) -> pd.DataFrame:
    stored = _read_json(directory / TIMELINE_FILE, {}) or {}
    return pd.DataFrame.from_records(stored.get("records", []), columns=list(SECOND_COLUMNS))


def row_label(kind: str, name: str) -> str:
    """The histogram row of a stats row: ``"<type> <name>"``, and ``Aggregated`` as is."""
    return AGGREGATED if name == AGGREGATED and not kind else f"{kind} {name}"


__all__ = [
    "AGGREGATED",
    "PERCENTILES",
    "PERCENTILE_COLUMNS",
    "TOKEN_ROW",
    "RunResults",
    "failure_kind",
    "load_run",
    "meta_seconds",
    "percentile",
    "row_label",
]
