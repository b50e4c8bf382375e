"""The top of ``report.html``: what a performance tester looks for in five seconds.

The verdict badge (thresholds met, failed with why, or not checked; a comparison's
regressions), the notices that come before any number (interrupted, nothing sent, load not
as asked, workers missing) and the figures: scenario, load model, duration, requests,
throughput, failures, the main row's p50/p99 and every percentile a threshold judged.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from authzkit.loadtest.read import notices
from authzkit.loadtest.read.decisions import EVALUATION_ROWS, decision_figures
from authzkit.loadtest.read.tables import AGGREGATED, RunResults, row_latency
from authzkit.loadtest.read.units import duration, rate

MAIN_ROW = {"challenge": "FLOW challenge round trip"}  # scenario → its headline row
DEFAULT_MAIN_ROW = "POST authorize"


def main_row(run: RunResults) -> str:
    """The row the header quotes: the round trip for the challenge scenario, an AuthZEN
    run's evaluation(s), else authorize."""
    evaluations = run.meta.get("evaluations")
    if isinstance(evaluations, Mapping):
        return EVALUATION_ROWS[evaluations.get("batch") is not None]
    return MAIN_ROW.get(str(run.meta.get("scenario", "")), DEFAULT_MAIN_ROW)


def _aggregated(run: RunResults) -> Mapping[str, Any]:
    rows = run.rows[run.rows["name"] == AGGREGATED]
    return rows.iloc[0].to_dict() if not rows.empty else {}


def verdict(
    run: RunResults, regressions: list[str] | None = None, max_regression: float | None = None
) -> tuple[str, str]:
    """The badge: (css class, words) — thresholds met, failed (with why) or not checked;
    a regression found by ``report --compare --max-regression`` fails it too, and a
    comparison that found none says so (the page then says what the exit code says)."""
    thresholds = run.summary.get("thresholds") or {}
    if regressions:
        return "failed", f"regression beyond +{max_regression:g} %: {'; '.join(regressions)}"
    if not thresholds.get("checked"):
        if regressions is not None:
            return "met", f"no regression beyond +{max_regression:g} % (p99, see below)"
        return "unchecked", "thresholds not checked"
    if thresholds.get("passed"):
        return "met", "thresholds met"
    problems = "; ".join(str(p) for p in thresholds.get("problems", [])) or "see the log"
    return "failed", f"thresholds failed: {problems}"


def _judged(run: RunResults) -> list[tuple[str, str]]:
    """The figures the thresholds judged, so every percentile a badge names is on the page:
    the aggregated p95 (``--max-p95-ms``), the schedule lag p99 (``--max-lag-ms``)."""
    thresholds = run.summary.get("thresholds") or {}
    figures = []
    if thresholds.get("max_p95_ms") is not None:
        figures.append(
            (
                "Aggregated p95 (judged by --max-p95-ms)",
                duration((thresholds.get("p95_ms") or 0) * 1000),
            )
        )
    if thresholds.get("max_lag_ms") is not None and thresholds.get("lag_p99_ms") is not None:
        figures.append(
            ("schedule lag p99 (judged by --max-lag-ms)", duration(thresholds["lag_p99_ms"] * 1000))
        )
    return figures


def _lag(run: RunResults) -> list[tuple[str, str]]:
    """The open model's schedule lag beside the latency it inflates (none closed-loop)."""
    figures = notices.lag_figures(run.summary)
    if figures is None:
        return []
    return [
        (
            "schedule lag p50 · p99 (counted in the latency)",
            f"{duration(figures['lag_p50'])} · {duration(figures['lag_p99'])}",
        )
    ]


def _drift(run: RunResults) -> list[tuple[str, str]]:
    """The drift's ratio (last window's p99 / first's) when the run was long enough."""
    found = run.summary.get("drift") or {}
    if not found.get("judged") or found.get("ratio") is None:
        return []
    judged = " (judged by --max-drift)" if found.get("max_drift") is not None else ""
    return [(f"drift: last / first window p99{judged}", f"{found['ratio']:.2f}x")]


def _duration(run: RunResults) -> tuple[str, str]:
    """The run time asked; an interrupted run's real duration instead (``interrupted after
    4.6 s``), the time asked beside it."""
    asked = str(run.meta.get("run_time", "?"))
    stopped = notices.interrupted_after(run)
    if stopped is None:
        return ("duration", asked)
    seconds = notices.run_seconds(run)
    shown = (
        f"interrupted after {notices.seconds_text(seconds)}"
        if seconds is not None
        else "interrupted"
    )
    return (f"duration ({asked} asked)", shown)


def _figures(run: RunResults) -> list[tuple[str, str]]:
    meta, total, row = run.meta, _aggregated(run), main_row(run)
    latency = row_latency(run, row)
    requests, failures = int(total.get("requests", 0)), int(total.get("failures", 0))
    ratio = f" ({failures / requests:.1%})" if requests and failures else ""
    figures = [
        ("scenario", meta.get("scenario", "?")),
        ("load", notices.load_model(meta, detail=True)),
        _duration(run),
        ("requests", f"{requests:,}"),
        *decision_figures(run),
    ]
    workers = notices.took_part(run.summary.get("workers") or {})
    if workers is not None:
        figures.append(("workers took part", workers))
    if requests:
        figures += [
            ("throughput", rate(total.get("rps"))),
            ("failures", f"{failures:,}{ratio}"),
            (f"p50 · {row}", duration(latency.get("p50"))),
            (f"p99 · {row}", duration(latency.get("p99"))),
            *_lag(run),
            *_judged(run),
            *_drift(run),
        ]
    return figures


def _notices(run: RunResults) -> list[str]:
    """Badges that come before any number: interrupted, nothing sent, load not as asked."""
    found = [("warn", "interrupted", notices.interrupted(run))]
    if not notices.request_count(run):
        found.append(
            ("failed", "no-requests", f"No request was sent: {notices.no_requests_reason(run)}")
        )
    found += [
        ("warn", "offered-load", line)
        for line in notices.shortfall(run.summary.get("schedule") or {})
    ]
    found += [("warn", "generator-lag", line) for line in notices.lag_warning(run.summary)]
    found += [
        ("warn", "workers", line) for line in notices.workers(run.summary.get("workers") or {})
    ]
    found += [("warn", "generator-memory", line) for line in notices.generator_memory(run.summary)]
    return [
        f'<p><span class="badge {css}" id="{key}">{html.escape(words)}</span></p>'
        for css, key, words in found
        if words
    ]


def headline(
    run: RunResults, regressions: list[str] | None = None, max_regression: float | None = None
) -> list[str]:
    css, words = verdict(run, regressions, max_regression)
    return [
        "<header><h1>authzkit load test</h1>",
        *_notices(run),
        f'<span class="badge {css}" id="verdict">{html.escape(words)}</span>',
        '<div class="figures" id="figures">',
        *(
            f'<div class="figure"><b>{html.escape(str(value))}</b>'
            f"<span>{html.escape(label)}</span></div>"
            for label, value in _figures(run)
        ),
        "</div></header>",
    ]


__all__ = ["DEFAULT_MAIN_ROW", "MAIN_ROW", "headline", "main_row", "verdict"]
