"""Load-test results as pandas tables, one per figure of the report (the PNGs are
:mod:`~authzkit.loadtest.read.plots`, the page :mod:`~authzkit.loadtest.read.html`).

The documented home of a run's tables: :func:`load_run` and :class:`RunResults` (from
:mod:`~authzkit.loadtest.read.run`) and the comparison of two runs (from
:mod:`~authzkit.loadtest.read.comparison`) are importable from here too, as
``docs/loadtest.md`` and notebook 06 use them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from authzkit.loadtest import percentiles
from authzkit.loadtest.read import figures, notices, thresholds
from authzkit.loadtest.read.comparison import (
    compare,
    compare_histograms,
    format_comparison,
    regressions,
)
from authzkit.loadtest.read.decisions import decisions_line
from authzkit.loadtest.read.run import AGGREGATED, RunResults, load_run, row_label
from authzkit.loadtest.read.spectrum import histogram_table
from authzkit.loadtest.read.units import duration

# The percentiles of every rows table, terminal and page (the summary's, and p95: the
# figure --max-p95-ms judges), and its maximum.
ROW_PERCENTILES = tuple(map(percentiles.key, sorted({*percentiles.SUMMARY, 95.0})))
LATENCY_COLUMNS = (*ROW_PERCENTILES, "max")


def _percentiles(histograms: Any) -> dict[str, dict[str, float]]:
    """Row → microsecond percentiles of a run's HdrHistograms (empty without them)."""
    if not histograms:
        return {}
    table = histogram_table(histograms).set_index("row")
    return {row: {k: float(v) for k, v in values.items()} for row, values in table.iterrows()}


def row_latency(run: RunResults, row: str, *, service: bool = False) -> dict[str, float]:
    """A row's microsecond percentiles: the HdrHistogram's, else those of Locust's (ms → µs)
    that the rows table shows (no p99.9 there); with ``service``, the open model's service
    times (none without their histograms)."""
    found = _percentiles(run.service_times if service else run.histograms).get(row)
    if found or service:
        return found or {}
    kind, _, name = row.partition(" ")
    rows = run.rows[(run.rows["type"] == kind) & (run.rows["name"] == name)]
    if rows.empty:
        return {}
    entry = rows.iloc[0]
    return {key: float(entry[key]) * 1000 for key in ROW_PERCENTILES if key in entry}


def failures_by_type(run: RunResults) -> pd.DataFrame:
    """Failure counts grouped by the service's error type (or HTTP status / exception)."""
    if run.failures.empty:
        return pd.DataFrame(columns=["error_type", "occurrences", "rows"])
    grouped = run.failures.assign(row=run.failures["type"] + " " + run.failures["name"])
    return (
        grouped.groupby("error_type", as_index=False)
        .agg(occurrences=("occurrences", "sum"), rows=("row", lambda r: ", ".join(sorted(set(r)))))
        .sort_values("occurrences", ascending=False, ignore_index=True)
    )


def throughput(run: RunResults) -> pd.DataFrame:
    """Requests per second for every second of the run, one column per row name."""
    if run.per_second.empty:
        return pd.DataFrame()
    return run.per_second.pivot_table(
        index="elapsed_s", columns="name", values="requests", aggfunc="sum", fill_value=0
    )


def timeline(run: RunResults) -> pd.DataFrame:
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


def timeline_source(run: RunResults) -> str:
    """What :func:`timeline` reads for this run, as a plot's title says it."""
    if not run.seconds.empty:
        return "requests completed in each second"
    return "Locust's last 10 s, each second"


def format_rows(rows: pd.DataFrame) -> str:
    """The per-row table as aligned text (for the terminal); a sentence when empty (never
    pandas' "Empty DataFrame" dump)."""
    if rows.empty:
        return "no request was sent"
    shown = rows.copy()
    shown["failure_ratio"] = shown["failure_ratio"].map("{:.2%}".format)
    text: str = shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")
    return text


def latency_rows(run: RunResults) -> pd.DataFrame:
    """The terminal's rows table: Locust's counts and throughput, and each row's latencies
    as read (``430 µs``, ``17.2 ms``: three significant digits) from the µs HdrHistograms
    (Locust's whole milliseconds only for a run recorded without them, which stay in
    ``stats.json`` and the CSV files either way): a fast service never reads ``0 ms``."""
    records = []
    for _, entry in run.rows.iterrows():
        label = row_label(entry["type"], entry["name"])
        latency = row_latency(run, label)
        records.append(
            {
                "row": label,
                "requests": int(entry["requests"]),
                "failures": int(entry["failures"]),
                "failure_ratio": f"{entry['failure_ratio']:.2%}",
                "rps": f"{entry['rps']:.1f}",
                **{key: duration(latency.get(key)) for key in ROW_PERCENTILES},
                "max": duration(latency.get("max", float(entry["max_ms"]) * 1000)),
            }
        )
    columns = ["row", "requests", "failures", "failure_ratio", "rps", *LATENCY_COLUMNS]
    return pd.DataFrame.from_records(records, columns=columns)


def summary_text(run: RunResults) -> str:
    """A few lines for the terminal: an interrupted run's real duration, the rows (µs
    figures, :func:`latency_rows`), the data sent and received and the checks' pass rate,
    the open model's schedule lag beside the latency it inflates, failures by type, the
    token call count, the drift, and every threshold given (held or broken) with the
    problems that broke the verdict."""
    rows = latency_rows(run)
    stopped = notices.interrupted(run)
    lines = [stopped] if stopped else []
    lines.append(rows.to_string(index=False) if not rows.empty else "no request was sent")
    said = [
        line
        for line in (decisions_line(run), figures.data_line(run), figures.checks_line(run))
        if line
    ]
    if said:
        lines += ["", *said]
    beside = notices.lag_beside_latency(run.summary)
    if beside is not None:
        lines += ["", beside]
    by_type = failures_by_type(run)
    if not by_type.empty:
        lines += ["", "failures by error type:", by_type.to_string(index=False)]
    lines += ["", f"token calls: {run.token_calls}"]
    drift = notices.drift_line(run.summary)
    if drift is not None:
        lines.append(drift)
    judged = thresholds.terminal(run.summary)
    if judged:
        lines += ["", *judged]
    verdict = run.summary.get("thresholds", {})
    for problem in verdict.get("problems", []):
        lines.append(f"threshold: {problem}")
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    if name == "Run":  # the former name of RunResults, deprecated
        from authzkit.wire.deprecation import deprecated

        deprecated(f"{__name__}.Run", f"{__name__}.RunResults")
        globals()["Run"] = RunResults
        return RunResults
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [  # RunResults, load_run and the comparison: documented here, defined beside
    "AGGREGATED",
    "LATENCY_COLUMNS",
    "ROW_PERCENTILES",
    "RunResults",
    "compare",
    "compare_histograms",
    "failures_by_type",
    "format_comparison",
    "format_rows",
    "latency_rows",
    "load_run",
    "regressions",
    "row_latency",
    "summary_text",
    "throughput",
    "timeline",
    "timeline_source",
]
