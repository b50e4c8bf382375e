"""Load-test results as pandas tables (the PNGs are :mod:`~authzkit.loadtest.read.plots`, the
page :mod:`~authzkit.loadtest.read.html`).

A run directory (what ``authzkit loadtest --out DIR`` writes) holds Locust's exact final
numbers in ``stats.json`` (``--json-file``), its per-second history in
``locust_stats_history.csv``, our ``summary.json`` (failures as counted at shutdown and the
threshold verdict, ``latency_us``, and under ``--rate`` ``service_time_us`` and
``schedule``), ``histograms.json`` (each row's microsecond HdrHistogram, see
:mod:`~authzkit.loadtest.record.histograms`; under ``--rate`` also the service times, either nested
in it as ``{"latency": …, "service_time": …}`` or in ``service_histograms.json``),
``timeline.json`` (p50/p99 of each second, see :mod:`~authzkit.loadtest.record.timeline`),
``run.json`` (what was run) and, when the command started the sandbox,
``sandbox_stats.json``. Locust's ``*_stats.csv`` is written on a timer and not at shutdown,
so totals here never come from it.

Latency judged from the histograms is in microseconds (``*_us``); Locust's own rows keep its
rounded milliseconds (``*_ms``, ``p50``…``p99``). A run recorded before histograms existed
still reports, from Locust's numbers alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from authzkit.loadtest import percentiles
from authzkit.loadtest.read.spectrum import HISTOGRAM_COLUMNS, histogram_table
from authzkit.loadtest.read.units import duration
from authzkit.loadtest.record.histograms import EncodedHistograms
from authzkit.loadtest.record.summary import HISTOGRAM_FILE, SERVICE_HISTOGRAM_FILE
from authzkit.loadtest.record.timeline import COLUMNS as SECOND_COLUMNS
from authzkit.loadtest.record.timeline import TIMELINE_FILE

PERCENTILES = tuple(p / 100 for p in percentiles.LOCUST)  # fractions, for nearest rank
PERCENTILE_COLUMNS = tuple(map(percentiles.key, percentiles.LOCUST))
AGGREGATED = "Aggregated"
TOKEN_ROW = "token"
_ERROR_TYPE = re.compile(r"srn:error:[\w.:-]+")
_HTTP_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_EXCEPTION = re.compile(r"^(\w+(?:Error|Exception|Timeout))\b")
# The percentile spectrum's ticks ("nines") and the table read from the histograms.
# Histogram p99 changes smaller than this are scheduling noise, not a regression.
MIN_HISTOGRAM_INCREASE_US = 100.0


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
    inner = re.sub(r"^\w+\((['\"])(.*)\1\)$", r"\2", text)  # CatchResponseError('…') → …
    status = _HTTP_STATUS.search(inner)
    if status:
        return f"HTTP {status.group(1)}"
    name = _EXCEPTION.match(inner)
    return name.group(1) if name else inner


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
    columns = [
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
    return pd.DataFrame.from_records(records, columns=columns)


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
class Run:
    """One load-test run read back from its directory."""

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


def load_run(directory: str | Path) -> Run:
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
    return Run(
        directory=directory,
        rows=_row_table(entries),
        per_second=_per_second(entries),
        history=history,
        failures=failures,
        meta=_read_json(directory / "run.json", {}),
        summary=summary,
        sandbox_stats=_read_json(directory / "sandbox_stats.json"),
        histograms=EncodedHistograms(latency),
        service_times=EncodedHistograms(service),
        seconds=_seconds(directory),
    )


def _seconds(directory: Path) -> pd.DataFrame:
    stored = _read_json(directory / TIMELINE_FILE, {}) or {}
    return pd.DataFrame.from_records(stored.get("records", []), columns=list(SECOND_COLUMNS))


def failures_by_type(run: Run) -> pd.DataFrame:
    """Failure counts grouped by the service's error type (or HTTP status / exception)."""
    if run.failures.empty:
        return pd.DataFrame(columns=["error_type", "occurrences", "rows"])
    grouped = run.failures.assign(row=run.failures["type"] + " " + run.failures["name"])
    return (
        grouped.groupby("error_type", as_index=False)
        .agg(occurrences=("occurrences", "sum"), rows=("row", lambda r: ", ".join(sorted(set(r)))))
        .sort_values("occurrences", ascending=False, ignore_index=True)
    )


def throughput(run: Run) -> pd.DataFrame:
    """Requests per second for every second of the run, one column per row name."""
    if run.per_second.empty:
        return pd.DataFrame()
    return run.per_second.pivot_table(
        index="elapsed_s", columns="name", values="requests", aggfunc="sum", fill_value=0
    )


def row_label(kind: str, name: str) -> str:
    """The histogram row of a stats row: ``"<type> <name>"``, and ``Aggregated`` as is."""
    return AGGREGATED if name == AGGREGATED and not kind else f"{kind} {name}"


def timeline(run: Run) -> pd.DataFrame:
    """Per second and row: ``elapsed_s``, ``p50_ms`` and ``p99_ms``.

    From ``timeline.json`` (the requests completed in that very second, microsecond
    histograms) when the run has it; else from Locust's history (a window of the last 10 s,
    whole milliseconds), whose samples that measured nothing (``N/A``, or Locust's 0 before
    its window holds data) are dropped, not drawn as a zero latency at the start.
    :func:`timeline_source` says which."""
    columns = ["elapsed_s", "row", "p50_ms", "p99_ms"]
    if not run.seconds.empty:
        seconds = run.seconds
        return pd.DataFrame(
            {
                "elapsed_s": seconds["second"].astype(float),
                "row": seconds["row"],
                "p50_ms": seconds["p50"] / 1000,
                "p99_ms": seconds["p99"] / 1000,
            }
        )
    history = run.history
    if history.empty or not {"Timestamp", "Name", "50%", "99%"} <= set(history.columns):
        return pd.DataFrame(columns=columns)
    kinds = history["Type"].fillna("") if "Type" in history else pd.Series("", history.index)
    frame = pd.DataFrame(
        {
            "elapsed_s": history["Timestamp"] - history["Timestamp"].min(),
            "row": [row_label(k, n) for k, n in zip(kinds, history["Name"], strict=True)],
            "p50_ms": pd.to_numeric(history["50%"], errors="coerce"),
            "p99_ms": pd.to_numeric(history["99%"], errors="coerce"),
        }
    )
    measured = frame["p99_ms"].notna() & ((frame["p50_ms"] > 0) | (frame["p99_ms"] > 0))
    return frame[measured].reset_index(drop=True)[columns]


def timeline_source(run: Run) -> str:
    """What :func:`timeline` reads for this run, as a plot's title says it."""
    if not run.seconds.empty:
        return "requests completed in each second"
    return "Locust's last 10 s, each second"


def compare(run: Run, baseline: Run) -> pd.DataFrame:
    """Per row: baseline and current p50…p99, rps and failure ratio, in this run's row order.

    ``*_delta`` is current minus baseline; ``*_change`` the same relative to the baseline
    (NaN when the baseline is 0: Locust's millisecond buckets make sub-ms rows read 0).
    When both runs have histograms, :func:`compare_histograms`'s ``*_us_*`` columns are
    joined on (``row`` = ``"<type> <name>"``), and :func:`regressions` judges on them.
    """
    metrics = [*PERCENTILE_COLUMNS, "rps", "failure_ratio"]
    left = baseline.rows.set_index(["type", "name"])[metrics]
    right = run.rows.set_index(["type", "name"])[metrics]
    order = list(right.index) + [key for key in left.index if key not in right.index]
    joined = pd.merge(
        left,
        right,
        how="outer",
        left_index=True,
        right_index=True,
        suffixes=("_baseline", "_current"),
    ).reindex(order)
    for metric in metrics:
        joined[f"{metric}_delta"] = joined[f"{metric}_current"] - joined[f"{metric}_baseline"]
        if metric != "failure_ratio":
            base = joined[f"{metric}_baseline"]
            joined[f"{metric}_change"] = joined[f"{metric}_delta"] / base.where(base != 0)
    joined = joined.reset_index()
    joined["row"] = [row_label(k, n) for k, n in zip(joined["type"], joined["name"], strict=True)]
    histograms = compare_histograms(run, baseline)
    if histograms.empty:
        return joined
    return joined.merge(
        histograms.drop(columns=["count_baseline", "count_current"]), on="row", how="left"
    )


def compare_histograms(run: Run, baseline: Run) -> pd.DataFrame:
    """Per histogram row of either run: counts, p50 … p99.99 and max in microseconds,
    ``<p>_us_baseline``, ``<p>_us_current`` and ``<p>_us_change`` (relative to the
    baseline), in this run's row order. Empty unless both runs have histograms: a run from
    before them has only Locust's millisecond buckets (see :func:`compare`)."""
    if not run.histograms or not baseline.histograms:
        return pd.DataFrame(columns=["row", "count_baseline", "count_current"])
    left = histogram_table(baseline.histograms).set_index("row")
    right = histogram_table(run.histograms).set_index("row")
    order = list(right.index) + [row for row in left.index if row not in right.index]
    joined = pd.DataFrame(index=pd.Index(order, name="row"))
    joined["count_baseline"] = left["count"]
    joined["count_current"] = right["count"]
    for metric in [*HISTOGRAM_COLUMNS, "max"]:
        base, current = left[metric].reindex(order), right[metric].reindex(order)
        joined[f"{metric}_us_baseline"] = base
        joined[f"{metric}_us_current"] = current
        joined[f"{metric}_us_change"] = (current - base) / base.where(base != 0)
    return joined.reset_index()


def regressions(
    comparison: pd.DataFrame,
    *,
    max_latency_increase: float,
    max_failure_ratio_increase: float = 0.0,
    min_latency_increase_ms: float = 1.0,
    min_latency_increase_us: float = MIN_HISTOGRAM_INCREASE_US,
    histogram_percentiles: tuple[str, ...] = ("p99",),
) -> list[str]:
    """Readable lines for the rows that regressed: a latency grown by more than
    ``max_latency_increase`` (0.2 = 20 %), or a failure ratio grown by more than
    ``max_failure_ratio_increase``.

    Latency is judged on the histograms' ``histogram_percentiles`` (default p99, exact to
    0.1 %; a growth must also exceed ``min_latency_increase_us``) where both runs have the
    row's histogram, else on Locust's p95 (a growth must also exceed
    ``min_latency_increase_ms``, its resolution)."""
    found = []
    for _, row in comparison.iterrows():
        label = f"{row['type']} {row['name']}".strip()
        judged = [
            p
            for p in histogram_percentiles
            if pd.notna(row.get(f"{p}_us_baseline")) and pd.notna(row.get(f"{p}_us_current"))
        ]
        for metric in judged:
            base, current = row[f"{metric}_us_baseline"], row[f"{metric}_us_current"]
            change = row.get(f"{metric}_us_change")
            if (
                pd.notna(change)
                and change > max_latency_increase
                and current - base > min_latency_increase_us
            ):
                found.append(
                    f"{label}: {metric} {_shown(base)} → {_shown(current)} "
                    f"({change:+.0%}, limit +{max_latency_increase:.0%}; histograms)"
                )
        change, delta_ms = row.get("p95_change"), row.get("p95_delta")
        if (
            not judged
            and pd.notna(change)
            and change > max_latency_increase
            and delta_ms > min_latency_increase_ms
        ):
            found.append(
                f"{label}: p95 {row['p95_baseline']:.0f} → {row['p95_current']:.0f} ms "
                f"({change:+.0%}, limit +{max_latency_increase:.0%})"
            )
        delta = row.get("failure_ratio_delta")
        if pd.notna(delta) and delta > max_failure_ratio_increase:
            found.append(
                f"{label}: failure ratio {row['failure_ratio_baseline']:.2%} → "
                f"{row['failure_ratio_current']:.2%}"
            )
    return found


def _shown(microseconds: float) -> str:
    return duration(microseconds) or "n/a"  # every latency as units.duration writes it


def format_rows(rows: pd.DataFrame) -> str:
    """The per-row table as aligned text (for the terminal); a sentence when empty (never
    pandas' "Empty DataFrame" dump)."""
    if rows.empty:
        return "no request was sent"
    shown = rows.copy()
    shown["failure_ratio"] = shown["failure_ratio"].map("{:.2%}".format)
    text: str = shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")
    return text


def format_comparison(comparison: pd.DataFrame) -> str:
    """Deltas of p50/p95/p99 and throughput as aligned text, and of the histograms' p99 and
    p99.9 (µs) when both runs have them."""
    columns = ["type", "name"]
    for metric in ("p50", "p95", "p99", "rps"):
        columns += [f"{metric}_baseline", f"{metric}_current", f"{metric}_change"]
    for metric in ("p99_us", "p99.9_us"):
        if f"{metric}_change" in comparison:
            columns += [f"{metric}_baseline", f"{metric}_current", f"{metric}_change"]
    shown = comparison[columns].copy()
    for column in [c for c in columns if c.endswith("_change")]:
        shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:+.0%}")
    text: str = shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")
    return text


def summary_text(run: Run) -> str:
    """A few lines for the terminal: the rows, failures by type and the token call count."""
    lines = [format_rows(run.rows)]
    by_type = failures_by_type(run)
    if not by_type.empty:
        lines += ["", "failures by error type:", by_type.to_string(index=False)]
    lines += ["", f"token calls: {run.token_calls}"]
    verdict = run.summary.get("thresholds", {})
    for problem in verdict.get("problems", []):
        lines.append(f"threshold: {problem}")
    return "\n".join(lines)


__all__ = [
    "AGGREGATED",
    "MIN_HISTOGRAM_INCREASE_US",
    "PERCENTILES",
    "PERCENTILE_COLUMNS",
    "TOKEN_ROW",
    "Run",
    "compare",
    "compare_histograms",
    "failure_kind",
    "failures_by_type",
    "format_comparison",
    "format_rows",
    "load_run",
    "percentile",
    "regressions",
    "row_label",
    "summary_text",
    "throughput",
    "timeline",
    "timeline_source",
]
