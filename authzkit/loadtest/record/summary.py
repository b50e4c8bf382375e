"""The end of a run in numbers: the ``--summary-file`` content and the threshold verdict.

Functions of the totals Locust hands over at exit, free of locust: ``summary.json`` and the
histogram and timeline files beside it, every limit judged once into ``thresholds.table``
(docs/internals.md, "The end of a run in numbers").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from authzkit.loadtest.record.evaluations import decision_summary
from authzkit.loadtest.record.histograms import (
    aggregate,
    encode_rows,
    latency_summary,
    merged_percentiles,
    values_at,
)
from authzkit.loadtest.record.timeline import TIMELINE_FILE

HISTOGRAM_FILE = "histograms.json"
SERVICE_HISTOGRAM_FILE = "service_histograms.json"
# Rewritten while the run goes, for the command's progress line, and removed at its end.
LIVE_FILE = "live.json"
LIVE_PERCENTILES = (50.0, 95.0, 99.0)
RECENT_S = 2  # the progress line's latest p99: of the last whole seconds merged


def live_figures(histograms: Mapping[str, HdrHistogram]) -> dict[str, int]:
    """:data:`LIVE_FILE`'s content, from the run's µs histograms so far: the count and
    ``p50_us``/``p95_us``/``p99_us`` of every row together (Locust's own live percentiles
    are whole milliseconds: a fast service read ``p95 0 ms``)."""
    rows = [h for row, h in histograms.items() if row != "Aggregated"]
    values = merged_percentiles(rows, LIVE_PERCENTILES)
    count = sum(int(h.get_total_count()) for h in rows)
    return {"count": count, **{f"p{p:g}_us": v for p, v in values.items()}}


def threshold_problems(
    *,
    p95_ms: float,
    failure_ratio: float,
    max_p95_ms: float | None,
    max_failure_ratio: float | None,
    lag_p99_ms: float | None = None,
    max_lag_ms: float | None = None,
    tail_ms: Mapping[str, float | None] | None = None,
    max_tail_ms: Mapping[str, float | None] | None = None,
) -> list[str]:
    """Readable lines for every threshold the run broke (empty when it passed); each names
    the figure it judged, which the report page shows too. ``tail_ms`` and ``max_tail_ms``:
    the aggregated p99 and p99.9 and their limits, by :data:`TAIL_LIMITS`' keys."""
    problems = []
    if max_p95_ms is not None and p95_ms > max_p95_ms:
        problems.append(f"Aggregated p95 {_ms(p95_ms)} ms > --max-p95-ms {max_p95_ms:g}")
    for key, (label, option, _) in TAIL_LIMITS.items():
        limit, value = (max_tail_ms or {}).get(key), (tail_ms or {}).get(key)
        if limit is not None and value is not None and value > limit:
            problems.append(f"Aggregated {label} {_ms(value)} ms > {option} {limit:g}")
    if max_failure_ratio is not None and failure_ratio > max_failure_ratio:
        problems.append(
            f"failure ratio {failure_ratio:.4f} > --max-failure-ratio {max_failure_ratio:g}"
        )
    if max_lag_ms is not None and lag_p99_ms is not None and lag_p99_ms > max_lag_ms:
        problems.append(f"schedule lag p99 {lag_p99_ms:.1f} ms > --max-lag-ms {max_lag_ms:g}")
    return problems


TAIL_LIMITS = {  # limit key -> (the figure, its option, the percentile judged)
    "max_p99_ms": ("p99", "--max-p99-ms", 99.0),
    "max_p999_ms": ("p99.9", "--max-p999-ms", 99.9),
}


def _entry(
    name: str, option: str, limit: float, unit: str, measured: float | None, held: bool | None
) -> dict[str, Any]:
    return {
        "name": name,
        "option": option,
        "limit": limit,
        "unit": unit,
        "measured": measured,
        "held": held,
        "note": None,
    }


def _drift_entries(drift: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The drift limits given, judged as :func:`~authzkit.loadtest.record.drift.judge`
    judges them (the ratio and the points from the two windows' unrounded figures); a
    limit whose windows could not be judged is broken, as the verdict counts it."""
    found = []
    first, last = drift.get("first") or {}, drift.get("last") or {}
    empty = [k for k, w in (("first", first), ("last", last)) if not w.get("count")]
    if not drift.get("judged"):
        why = str(drift.get("reason") or "not judged")
    elif empty:
        why = f"not judged: no request completed in the {' and '.join(empty)} window"
    else:
        why = ""
    limits = (
        ("max_drift", "drift: last / first window p99", "--max-drift", "x"),
        ("max_failure_drift", "failure drift: last - first window", "--max-failure-drift", "pp"),
    )
    for key, name, option, unit in limits:
        limit = drift.get(key)
        if limit is None:
            continue
        entry = _entry(name, option, float(limit), unit, None, False)
        if why:
            entry["note"] = why
            found.append(entry)
            continue
        if key == "max_drift":
            measured = last["p99"] / first["p99"] if first.get("p99") and last.get("p99") else None
        elif first.get("failure_ratio") is not None and last.get("failure_ratio") is not None:
            measured = (last["failure_ratio"] - first["failure_ratio"]) * 100
        else:
            measured = None
        entry["measured"] = measured
        entry["held"] = None if measured is None else not measured > limit
        if measured is None:
            entry["note"] = "not measured"
        found.append(entry)
    return found


def threshold_table(
    thresholds: Mapping[str, Any], drift: Mapping[str, Any] | None = None, requests: int = 1
) -> list[dict[str, Any]]:
    """One entry per limit given (none for a limit not given), in the order of the options:
    ``name`` (the figure judged), ``option``, ``limit``, ``unit`` (``ms``, ``ratio``,
    ``x``, ``pp``), ``measured`` (None when nothing was measured: ``note`` says why) and
    ``held`` (True, False, or None when not judged). The comparisons are the verdict's
    (:func:`threshold_problems`, the drift's), so a ✗ here is a broken limit of the exit
    code. ``thresholds`` is summary.json's section (a run recorded before this table
    existed is read the same way); a run that completed no request measured nothing."""
    measured = {
        "max_p95_ms": ("Aggregated p95", "--max-p95-ms", "ms", thresholds.get("p95_ms")),
        **{
            key: (f"Aggregated {label}", option, "ms", thresholds.get(f"{label}_ms"))
            for key, (label, option, _) in TAIL_LIMITS.items()
        },
        "max_failure_ratio": (
            "failure ratio",
            "--max-failure-ratio",
            "ratio",
            thresholds.get("failure_ratio"),
        ),
        "max_lag_ms": ("schedule lag p99", "--max-lag-ms", "ms", thresholds.get("lag_p99_ms")),
    }
    found = []
    for key, (name, option, unit, value) in measured.items():
        limit = thresholds.get(key)
        if limit is None:
            continue
        if not requests or value is None:
            entry = _entry(name, option, float(limit), unit, None, None)
            entry["note"] = "no request completed" if not requests else "not measured"
        else:
            entry = _entry(name, option, float(limit), unit, float(value), not value > limit)
        found.append(entry)
    return found + _drift_entries(drift or {})


def _ms(value: float) -> str:
    """Milliseconds as read: whole above 100 (``1,500``, ``150``), else three significant
    digits (``12.3``, ``0.187``): a sub-millisecond p95 is not ``0``."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def aggregated_tail_ms(histograms: Mapping[str, HdrHistogram]) -> dict[str, float | None]:
    """The p99 and p99.9 of every row's times merged, in ms, by :data:`TAIL_LIMITS`' keys
    (None when the histograms hold nothing)."""
    merged = aggregate(histograms)
    if not merged.get_total_count():
        return dict.fromkeys(TAIL_LIMITS)
    values = values_at(merged, [percent for _, _, percent in TAIL_LIMITS.values()])
    return {key: values[percent] / 1000.0 for key, (_, _, percent) in TAIL_LIMITS.items()}


def aggregated_p95_ms(histograms: Mapping[str, HdrHistogram], fallback: float) -> float:
    """The p95 of every row's times merged, in ms, from the µs histograms; ``fallback``
    (Locust's own p95) when they hold nothing. Locust rounds a response time below 100 ms
    to whole milliseconds, so against a service answering in 200 µs its p95 reads 0 and
    ``--max-p95-ms 0.5`` could never fail."""
    merged = aggregate(histograms)
    if not merged.get_total_count():
        return fallback
    return values_at(merged, [95.0])[95.0] / 1000.0


def error_entries(errors: Iterable[Any]) -> list[dict[str, Any]]:
    """summary.json's ``failures`` from Locust's ``stats.errors.values()`` (``StatsError``:
    ``method``, ``name``, ``error``, ``occurrences`` and ``parse_error``)."""
    return [
        {
            "type": e.method,
            "name": e.name,
            "error": e.parse_error(e.error),
            "occurrences": e.occurrences,
        }
        for e in errors
    ]


def build_summary(
    *,
    requests: int,
    failures: int,
    p95_ms: float,
    errors: list[dict[str, Any]],
    counters: list[dict[str, int]],
    max_p95_ms: float | None,
    max_failure_ratio: float | None,
    max_lag_ms: float | None = None,
    max_p99_ms: float | None = None,
    max_p999_ms: float | None = None,
    histograms: Mapping[str, HdrHistogram] | None = None,
    service_histograms: Mapping[str, HdrHistogram] | None = None,
    schedule: dict[str, Any] | None = None,
    workers: dict[str, Any] | None = None,
    drift: dict[str, Any] | None = None,
    run_s: float | None = None,
    data: dict[str, Any] | None = None,
    per_decision: HdrHistogram | None = None,
) -> dict[str, Any]:
    """The ``--summary-file`` content: failures, token-provider counters summed over the
    processes (``rejected_401`` from the failures), the threshold verdict (the p95 judged
    from ``histograms``, ``p95_ms`` only without them: :func:`aggregated_p95_ms`), and
    ``latency_us``: per row (``"<type> <name>"``, plus ``Aggregated``) the count and
    p50/p90/p99/p99.9/max in microseconds from ``histograms`` (empty without them). Open
    model only (given): ``service_time_us`` from ``service_histograms``, and ``schedule``;
    a master's ``workers`` (see :mod:`~authzkit.loadtest.record.workers`); the ``drift``
    judged (:mod:`~authzkit.loadtest.record.drift`), whose problems join the verdict;
    ``run_s``, the seconds of load, and ``data``, the bodies sent and received, when
    measured; ``decisions`` (an AuthZEN run's) with ``per_decision``'s percentiles.
    ``thresholds.table`` is every limit given, judged (:func:`threshold_table`)."""
    provider = {key: sum(c.get(key, 0) for c in counters) for key in ("token_calls", "refreshes")}
    provider["processes"] = len(counters)
    provider["rejected_401"] = sum(e["occurrences"] for e in errors if "HTTP 401" in e["error"])
    ratio = failures / requests if requests else (1.0 if failures else 0.0)
    lag_p99_ms = schedule["lag_p99_us"] / 1000 if schedule else None
    p95_ms = aggregated_p95_ms(histograms or {}, p95_ms)
    tail = aggregated_tail_ms(histograms or {})
    max_tail = {"max_p99_ms": max_p99_ms, "max_p999_ms": max_p999_ms}
    problems = threshold_problems(
        p95_ms=p95_ms,
        failure_ratio=ratio,
        max_p95_ms=max_p95_ms,
        max_failure_ratio=max_failure_ratio,
        lag_p99_ms=lag_p99_ms,
        max_lag_ms=max_lag_ms,
        tail_ms=tail,
        max_tail_ms=max_tail,
    ) + list((drift or {}).get("problems", []))
    limits = (max_p95_ms, max_p99_ms, max_p999_ms, max_failure_ratio, max_lag_ms)
    judged = {
        "max_p95_ms": max_p95_ms,
        **max_tail,
        "max_failure_ratio": max_failure_ratio,
        "max_lag_ms": max_lag_ms,
        "p95_ms": p95_ms,
        **{f"{label}_ms": tail[key] for key, (label, _, _) in TAIL_LIMITS.items()},
        "failure_ratio": ratio,
        "lag_p99_ms": lag_p99_ms,
    }
    summary: dict[str, Any] = {
        "requests": requests,
        "failures_total": failures,
        "failures": errors,
        "token_provider": provider,
        "thresholds": {
            **judged,
            "checked": any(v is not None for v in limits) or bool((drift or {}).get("checked")),
            "passed": not problems,
            "problems": problems,
            "table": threshold_table(judged, drift, requests),
        },
        "latency_us": latency_summary(histograms or {}),
    }
    decisions = decision_summary(counters, per_decision)
    if decisions is not None:
        summary["decisions"] = decisions
    if service_histograms is not None:
        summary["service_time_us"] = latency_summary(service_histograms)
    if schedule is not None:
        summary["schedule"] = schedule
    if workers is not None:
        summary["workers"] = workers
    if drift is not None:
        summary["drift"] = drift
    if run_s is not None:
        summary["run_s"] = run_s
    if data is not None:
        summary["data"] = data
    return summary


def write_run_files(
    summary_path: str | Path,
    summary: dict[str, Any],
    histograms: Mapping[str, HdrHistogram],
    service_histograms: Mapping[str, HdrHistogram] | None = None,
    timeline: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``summary`` to ``summary_path`` and the encoded ``histograms`` to
    ``histograms.json`` in the same directory (``service_histograms`` of an open-model
    run to ``service_histograms.json``, and the per-second ``timeline`` to
    ``timeline.json``); returns the histogram file's path."""
    path = Path(summary_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    histogram_path = path.with_name(HISTOGRAM_FILE)
    histogram_path.write_text(
        json.dumps(encode_rows(histograms), indent=1) + "\n", encoding="utf-8"
    )
    if service_histograms is not None:
        path.with_name(SERVICE_HISTOGRAM_FILE).write_text(
            json.dumps(encode_rows(service_histograms), indent=1) + "\n", encoding="utf-8"
        )
    if timeline is not None:
        path.with_name(TIMELINE_FILE).write_text(json.dumps(timeline) + "\n", encoding="utf-8")
    return histogram_path


__all__ = [
    "HISTOGRAM_FILE",
    "LIVE_FILE",
    "LIVE_PERCENTILES",
    "RECENT_S",
    "SERVICE_HISTOGRAM_FILE",
    "TAIL_LIMITS",
    "aggregated_p95_ms",
    "aggregated_tail_ms",
    "build_summary",
    "error_entries",
    "live_figures",
    "threshold_problems",
    "threshold_table",
    "write_run_files",
]
