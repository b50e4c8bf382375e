"""The sections of ``report.html`` below its headline, as HTML tables: every row with
latencies in the unit their magnitude calls for (:mod:`~authzkit.loadtest.read.units`),
failures by error type (or one line saying there were none), the open model's schedule, the
comparison with a baseline, and small key/value tables (the run's parameters, the sandbox's
counters).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from authzkit.loadtest import percentiles
from authzkit.loadtest.read.parameters import readable
from authzkit.loadtest.read.tables import (
    ROW_PERCENTILES,
    RunResults,
    compare_histograms,
    failures_by_type,
    row_latency,
)
from authzkit.loadtest.read.units import duration, rate
from authzkit.loadtest.record.schedule import LATE_US

AGGREGATED = "Aggregated"
# The percentiles each table shows, named by percentiles.key: the rows' are the summary's
# (ROW_PERCENTILES, from tables: the terminal's table shows the same).
COMPARED_PERCENTILES = tuple(map(percentiles.key, percentiles.COMPARED))


def schedule_table(schedule: Mapping[str, Any], stopped_after: float | None = None) -> str:
    """The open model's schedule in words and units (``schedule lag p99 2.68 ms``), not
    summary.json's keys; ``stopped_after``: an interrupted run's real seconds, said in
    place of the seconds the schedule was planned for."""
    intended = int(schedule.get("intended") or 0)

    def share(count: Any) -> str:
        count = int(count or 0)
        return f"{count:,} ({count / intended:.1%} of the starts)" if intended else f"{count:,}"

    lag = schedule.get("lag_p99_us")
    pairs = [
        ("rate asked", rate(schedule.get("rate"))),
        ("starts due", f"{intended:,}"),
        ("starts sent", f"{int(schedule.get('sent') or 0):,}"),
        (f"sent more than {LATE_US // 1000} ms late", share(schedule.get("late"))),
        ("schedule lag p50 (send minus intended start)", duration(schedule.get("lag_p50_us"))),
        ("schedule lag p99 (send minus intended start)", duration(lag) if lag is not None else ""),
        ("held back by the in-flight cap", share(schedule.get("cap_reached"))),
        ("most calls in flight at once", f"{int(schedule.get('peak_in_flight') or 0):,}"),
    ]
    if schedule.get("began_at"):
        began = datetime.fromtimestamp(float(schedule["began_at"]), UTC)
        pairs.append(("intended starts counted from", f"{began:%Y-%m-%d %H:%M:%S.%f} UTC"))
    if stopped_after is not None:
        planned = f"; {float(schedule['seconds']):.1f} s planned" if schedule.get("seconds") else ""
        pairs.append(("schedule ran for", f"{stopped_after:.1f} s (interrupted{planned})"))
    elif schedule.get("seconds"):
        pairs.append(("schedule ran for", f"{float(schedule['seconds']):.1f} s"))
    return _table(["", ""], pairs, text_columns=2, css="kv")


def _cell(value: Any, *, text: bool = False) -> str:
    return (
        f'<td class="text">{html.escape(str(value))}</td>'
        if text
        else f"<td>{html.escape(str(value))}</td>"
    )


def _table(
    header: list[str], rows: Iterable[Sequence[Any]], *, text_columns: int = 1, css: str = ""
) -> str:
    head = "".join(
        f'<th class="text">{html.escape(h)}</th>'
        if i < text_columns
        else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(header)
    )
    body = "".join(
        "<tr>" + "".join(_cell(v, text=i < text_columns) for i, v in enumerate(r)) + "</tr>"
        for r in rows
    )
    head = f"<tr>{head}</tr>" if any(header) else ""  # key/value tables need no header
    return f'<div class="scroll"><table class="{css}">{head}{body}</table></div>'


def flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"a": {"b": 1}, "c": None}`` → ``[("a.b", 1)]``: nested keys dotted, unset left out."""
    pairs: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            pairs += flatten(value, f"{name}.")
        elif value not in (None, "", [], {}):
            pairs.append((name, ", ".join(map(str, value)) if isinstance(value, list) else value))
    return pairs


def key_values(data: Mapping[str, Any], *, labels: bool = False) -> str:
    """A small two-column table; one line when there is nothing to show. With ``labels``
    (the run's parameters) keys and values read as words (:mod:`.parameters`)."""
    pairs: list[tuple[str, Any]] = flatten(data)
    if labels:
        pairs = list(readable(pairs))
    if not pairs:
        return '<p class="note">Nothing recorded.</p>'
    return _table(["", ""], pairs, text_columns=2, css="kv")


def rows_table(run: RunResults, *, service: bool = False) -> str:
    """Every row: Locust's counts and throughput, latencies by magnitude (HdrHistogram µs
    when recorded, else Locust's milliseconds); with ``service``, the open model's service
    times (from the actual send) instead of the response times."""
    keys = (*ROW_PERCENTILES, "max")
    lines = []
    for _, entry in run.rows.iterrows():
        label = AGGREGATED if entry["name"] == AGGREGATED else f"{entry['type']} {entry['name']}"
        latency = row_latency(run, label, service=service)
        lines.append(
            [
                label,
                f"{int(entry['requests']):,}",
                f"{int(entry['failures']):,}",
                rate(entry.get("rps")),
                *(duration(latency.get(k)) for k in keys),
            ]
        )
    return _table(["row", "requests", "failures", "throughput", *keys], lines)


def failures_table(run: RunResults) -> str:
    found = failures_by_type(run)
    if found.empty:
        return '<p class="note" id="no-failures">No failures.</p>'
    return _table(
        ["error type", "occurrences", "rows"],
        ([r.error_type, f"{int(r.occurrences):,}", r.rows] for r in found.itertuples()),
        text_columns=1,
    )


def _change(before: Any, after: Any, change: Any) -> str:
    """``14.3 ms → 15.1 ms (+5.6 %)``; a side missing from one run shows as ``n/a``."""

    def known(value: Any) -> bool:
        return value is not None and value == value  # NaN is not equal to itself

    shown = (
        f"{duration(before) if known(before) else 'n/a'} → "
        f"{duration(after) if known(after) else 'n/a'}"
    )
    return f"{shown} ({change:+.1%})" if known(change) else shown


def comparison_section(run: RunResults, baseline: RunResults) -> list[str]:
    """Two runs side by side, one cell per percentile: baseline → this run (change)."""
    compared = compare_histograms(run, baseline)
    if compared.empty:
        return []
    metrics = (*COMPARED_PERCENTILES, "max")
    lines = [
        [
            entry["row"],
            f"{_count(entry['count_baseline'])} → {_count(entry['count_current'])}",
            *(
                _change(
                    entry[f"{m}_us_baseline"], entry[f"{m}_us_current"], entry[f"{m}_us_change"]
                )
                for m in metrics
            ),
        ]
        for _, entry in compared.iterrows()
    ]
    return [
        f"<h2>Compared with {html.escape(str(baseline.directory))}</h2>",
        '<p class="note">baseline → this run (change relative to the baseline)</p>',
        _table(["row", "requests", *metrics], lines),
    ]


def _count(value: Any) -> str:
    return f"{int(value):,}" if value == value and value is not None else "n/a"


__all__ = [
    "AGGREGATED",
    "COMPARED_PERCENTILES",
    "comparison_section",
    "failures_table",
    "flatten",
    "key_values",
    "rows_table",
    "schedule_table",
]
