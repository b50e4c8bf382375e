"""An AuthZEN run's decisions as the terminal and the report say them: how many, how many
authorized and denied, per second, per call, and the latency each decision cost (its mean
and percentiles; the calls' own are their row's). From ``summary.json``'s ``decisions``
(a run recorded before the percentiles existed shows the mean alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authzkit.loadtest.read.run import RunResults
from authzkit.loadtest.read.units import duration

EVALUATION_ROWS = ("POST evaluation", "POST evaluations")  # one evaluation, a batch
PER_DECISION = "latency_us_per_decision"  # summary.json's decisions: count, p50 … max (µs)
PER_DECISION_SHOWN = ("p50", "p90", "p99", "max")


def _found(summary: Mapping[str, Any]) -> Mapping[str, Any] | None:
    found = summary.get("decisions")
    return found if isinstance(found, Mapping) else None


def per_second(run: RunResults) -> float | None:
    """Decisions per second, over the seconds Locust's requests/s of the calls' row counts
    (so decisions/s and requests/s are of the same time); None without decisions."""
    found = _found(run.summary)
    rows = run.rows[run.rows["name"].isin([r.split(" ", 1)[1] for r in EVALUATION_ROWS])]
    if found is None or rows.empty:
        return None
    requests, rps = float(rows["requests"].sum()), float(rows["rps"].sum())
    if requests <= 0 or rps <= 0:
        return None
    return float(found.get("count", 0)) * rps / requests


def decision_figures(run: RunResults) -> list[tuple[str, str]]:
    """(label, text) pairs: decisions, their outcomes, decisions/s, per call, the latency
    per decision (mean, then p50 · p90 · p99 · max when recorded)."""
    found = _found(run.summary)
    if found is None:
        return []
    count = int(found.get("count", 0))
    figures = [
        ("decisions", f"{count:,}"),
        (
            "outcomes",
            f"{int(found.get('authorized', 0)):,} authorized, {int(found.get('denied', 0)):,} "
            f"denied, {int(found.get('undecided_calls', 0)):,} calls without a decision",
        ),
    ]
    each = per_second(run)
    if each is not None:
        figures.append(("decisions/s", f"{each:,.1f}"))
    figures.append(("decisions per call", f"{float(found.get('per_call', 0.0)):.2f}"))
    mean = found.get("mean_us_per_decision")
    if isinstance(mean, int | float):
        figures.append(("latency per decision (mean)", duration(mean)))
    spread = per_decision_text(found.get(PER_DECISION))
    if spread is not None:
        figures.append(("latency per decision", spread))
    return figures


def per_decision_text(found: Any) -> str | None:
    """``p50 250 µs · p90 1.50 ms · p99 1.50 ms · max 1.50 ms``; None when the run did not
    record them (an older run) or answered no call."""
    if not isinstance(found, Mapping) or not found.get("count"):
        return None
    shown = [(k, found.get(k)) for k in PER_DECISION_SHOWN]
    return " · ".join(f"{k} {duration(v)}" for k, v in shown if isinstance(v, int | float))


def decisions_line(run: RunResults) -> str | None:
    """``decisions: 4,000 (3,000 authorized, 1,000 denied, …), 1,333.3/s, …``; None
    for a run that sent no evaluations."""
    figures = decision_figures(run)
    if not figures:
        return None
    (_, count), (_, outcomes), *rest = figures
    return f"decisions: {count} ({outcomes}); " + ", ".join(f"{k} {v}" for k, v in rest)


__all__ = [
    "EVALUATION_ROWS",
    "PER_DECISION",
    "decision_figures",
    "decisions_line",
    "per_decision_text",
    "per_second",
]
