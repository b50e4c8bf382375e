"""Load-test results as pandas tables, one per figure of the report (the PNGs are
:mod:`~authzkit.loadtest.read.plots`, the page :mod:`~authzkit.loadtest.read.html`).

The documented home of a run's tables: :func:`load_run` and :class:`Run` (from
:mod:`~authzkit.loadtest.read.run`) and the comparison of two runs (from
:mod:`~authzkit.loadtest.read.comparison`) are importable from here too, as
``docs/loadtest.md`` and notebook 06 use them.
"""

from __future__ import annotations

import pandas as pd

from authzkit.loadtest.read.comparison import (
    compare,
    compare_histograms,
    format_comparison,
    regressions,
)
from authzkit.loadtest.read.run import Run, load_run, row_label


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


def format_rows(rows: pd.DataFrame) -> str:
    """The per-row table as aligned text (for the terminal); a sentence when empty (never
    pandas' "Empty DataFrame" dump)."""
    if rows.empty:
        return "no request was sent"
    shown = rows.copy()
    shown["failure_ratio"] = shown["failure_ratio"].map("{:.2%}".format)
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


__all__ = [  # Run, load_run and the comparison: documented here, defined beside
    "Run",
    "compare",
    "compare_histograms",
    "failures_by_type",
    "format_comparison",
    "format_rows",
    "load_run",
    "regressions",
    "summary_text",
    "throughput",
    "timeline",
    "timeline_source",
]
