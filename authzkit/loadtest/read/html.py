"""``report.html``: a run as a person reads it, in one self-contained page.

First what a performance tester looks for in five seconds (scenario, load model, duration,
requests, throughput, failures, the main row's p50/p99 and a verdict badge), then the rows
with latencies in the unit their magnitude calls for (:mod:`~authzkit.loadtest.read.units`),
failures (or one line saying there were none), small key/value tables for the parameters,
the schedule and the sandbox's counters, and the plots that carry information. The PNGs are
embedded as data URIs, so the page is one file to attach anywhere; a print stylesheet keeps
it readable on paper. This module imports :mod:`~authzkit.loadtest.read.tables` (the tables) and
:mod:`~authzkit.loadtest.read.plots` (the images); neither imports it back.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from authzkit.loadtest.read import notices
from authzkit.loadtest.read.parameters import readable
from authzkit.loadtest.read.plots import spans_lifetimes, write_plots
from authzkit.loadtest.read.spectrum import histogram_table
from authzkit.loadtest.read.tables import Run, compare_histograms, failures_by_type
from authzkit.loadtest.read.units import duration, rate
from authzkit.loadtest.record.schedule import LATE_US

AGGREGATED = "Aggregated"
MAIN_ROW = {"challenge": "FLOW challenge round trip"}  # scenario → its headline row
DEFAULT_MAIN_ROW = "POST authorize"

_STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1.2em;max-width:1180px;color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:1.4em 0 .4em}
.figures{display:flex;flex-wrap:wrap;gap:.6em;margin:.8em 0}
.figure{border:1px solid #ddd;border-radius:6px;padding:.4em .8em;min-width:7.5em}
.figure b{display:block;font-size:1.25em}.figure span{color:#666;font-size:.85em}
.badge{display:inline-block;border-radius:1em;padding:.25em .9em;font-weight:600}
.met{background:#d9f2dd;color:#11612a}.failed{background:#fbdcdc;color:#8a1111}
.unchecked{background:#eee;color:#444}.warn{background:#fff1cc;color:#6b4a00}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.3em 0;font-size:.92em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#f4f4f4}td.text,th.text{text-align:left}
.kv td:first-child{text-align:left;color:#555}.kv td{text-align:left}
.plots img{max-width:100%;display:block;margin:.6em 0}
p.note{color:#555;margin:.3em 0}
@media print{body{max-width:none;padding:0}.plots img{page-break-inside:avoid;max-width:100%}}
"""


def main_row(run: Run) -> str:
    """The row the header quotes: the round trip for the challenge scenario, else authorize."""
    return MAIN_ROW.get(str(run.meta.get("scenario", "")), DEFAULT_MAIN_ROW)


def _aggregated(run: Run) -> Mapping[str, Any]:
    rows = run.rows[run.rows["name"] == AGGREGATED]
    return rows.iloc[0].to_dict() if not rows.empty else {}


def _percentiles(histograms: Any) -> dict[str, dict[str, float]]:
    """Row → microsecond percentiles of a run's HdrHistograms (empty without them)."""
    if not histograms:
        return {}
    table = histogram_table(histograms).set_index("row")
    return {row: {k: float(v) for k, v in values.items()} for row, values in table.iterrows()}


def _latency(run: Run, row: str, *, service: bool = False) -> dict[str, float]:
    """A row's microsecond percentiles: the HdrHistogram's, else Locust's (ms → µs); with
    ``service``, the open model's service times (none without their histograms)."""
    found = _percentiles(run.service_times if service else run.histograms).get(row)
    if found or service:
        return found or {}
    kind, _, name = row.partition(" ")
    rows = run.rows[(run.rows["type"] == kind) & (run.rows["name"] == name)]
    if rows.empty:
        return {}
    entry = rows.iloc[0]
    return {key: float(entry[key]) * 1000 for key in ("p50", "p90", "p99") if key in entry}


def verdict(
    run: Run, regressions: list[str] | None = None, max_regression: float | None = None
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


def _model(meta: Mapping[str, Any]) -> str:
    if meta.get("rate"):
        return f"open model, {rate(meta['rate'])} ({meta.get('arrivals') or 'constant'})"
    return f"closed loop, {meta.get('users', '?')} users"


def _judged(run: Run) -> list[tuple[str, str]]:
    """The figures the thresholds judged, so every percentile a badge names is on the page:
    Locust's aggregated p95 (``--max-p95-ms``), the schedule lag p99 (``--max-lag-ms``)."""
    thresholds = run.summary.get("thresholds") or {}
    figures = []
    if thresholds.get("max_p95_ms") is not None:
        figures.append(
            ("Aggregated p95 (judged by --max-p95-ms)", f"{thresholds.get('p95_ms') or 0:.0f} ms")
        )
    if thresholds.get("max_lag_ms") is not None and thresholds.get("lag_p99_ms") is not None:
        figures.append(
            ("schedule lag p99 (judged by --max-lag-ms)", duration(thresholds["lag_p99_ms"] * 1000))
        )
    return figures


def _figures(run: Run) -> list[tuple[str, str]]:
    meta, total, row = run.meta, _aggregated(run), main_row(run)
    latency = _latency(run, row)
    requests, failures = int(total.get("requests", 0)), int(total.get("failures", 0))
    ratio = f" ({failures / requests:.1%})" if requests and failures else ""
    figures = [
        ("scenario", meta.get("scenario", "?")),
        ("load", _model(meta)),
        ("duration", meta.get("run_time", "?")),
        ("requests", f"{requests:,}"),
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
            *_judged(run),
        ]
    return figures


def _notices(run: Run) -> list[str]:
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
    found += [
        ("warn", "workers", line) for line in notices.workers(run.summary.get("workers") or {})
    ]
    return [
        f'<p><span class="badge {css}" id="{key}">{html.escape(words)}</span></p>'
        for css, key, words in found
        if words
    ]


def _header(
    run: Run, regressions: list[str] | None = None, max_regression: float | None = None
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


def schedule_table(schedule: Mapping[str, Any]) -> str:
    """The open model's schedule in words and units (``schedule lag p99 2.68 ms``), not
    summary.json's keys."""
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
        ("schedule lag p99 (send minus intended start)", duration(lag) if lag is not None else ""),
        ("held back by the in-flight cap", share(schedule.get("cap_reached"))),
        ("most calls in flight at once", f"{int(schedule.get('peak_in_flight') or 0):,}"),
    ]
    if schedule.get("seconds"):
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


def rows_table(run: Run, *, service: bool = False) -> str:
    """Every row: Locust's counts and throughput, latencies by magnitude (HdrHistogram µs
    when recorded, else Locust's milliseconds); with ``service``, the open model's service
    times (from the actual send) instead of the response times."""
    keys = ("p50", "p90", "p99", "p99.9", "max")
    lines = []
    for _, entry in run.rows.iterrows():
        label = AGGREGATED if entry["name"] == AGGREGATED else f"{entry['type']} {entry['name']}"
        latency = _latency(run, label, service=service)
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


def _failures(run: Run) -> str:
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


def _comparison(run: Run, baseline: Run) -> list[str]:
    """Two runs side by side, one cell per percentile: baseline → this run (change)."""
    compared = compare_histograms(run, baseline)
    if compared.empty:
        return []
    metrics = ("p50", "p99", "p99.9", "max")
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


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _plots(run: Run, images: list[Path]) -> list[str]:
    """The plots that carry information; a sentence in place of a single-point one."""
    parts: list[str] = []
    for path in images:
        if path.stem == "token_calls" and not spans_lifetimes(run):
            parts.append(
                f'<p class="note">Token calls: {run.token_calls} (the run did not '
                "span several token lifetimes; nothing to plot).</p>"
            )
            continue
        parts.append(_image(path))
    return parts


def write_html(
    run: Run,
    out: Path | None = None,
    *,
    baseline: Run | None = None,
    regressions: list[str] | None = None,
    max_regression: float | None = None,
) -> Path:
    """One self-contained ``report.html`` in ``out`` (default: the run directory); with
    ``baseline``, the histogram comparison and the overlaid spectra; with ``regressions``
    (what ``--max-regression`` found; ``[]`` for none), the badge says it."""
    out = Path(out) if out is not None else run.directory
    images = write_plots(run, out, baseline=baseline)
    path = out / "report.html"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>authzkit load test: {html.escape(str(run.meta.get('scenario', '')))}"
        f"</title><style>{_STYLE}</style></head><body>",
        *_header(run, regressions, max_regression),
        "<h2>Rows</h2>",
        rows_table(run),
        "<h2>Failures by error type</h2>",
        _failures(run),
    ]
    if run.service_times:
        parts += [
            "<h2>Service time by row (open model: from the actual send)</h2>",
            rows_table(run, service=True),
        ]
    if run.summary.get("schedule"):
        parts += ["<h2>Schedule (open model)</h2>", schedule_table(run.summary["schedule"])]
    if baseline is not None:
        parts += [
            f'<p class="note" id="model-mismatch">{html.escape(line)}</p>'
            for line in notices.model_mismatch(run, baseline)
        ]
        parts += _comparison(run, baseline)
    parts += [
        "<h2>Run parameters</h2>",
        key_values({k: v for k, v in run.meta.items() if k != "command"}, labels=True),
    ]
    if run.sandbox_stats:
        parts += ["<h2>Sandbox counters (during the run)</h2>", key_values(run.sandbox_stats)]
    parts += ['<h2>Plots</h2><div class="plots">', *_plots(run, images), "</div>", "</body></html>"]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = [
    "flatten",
    "key_values",
    "main_row",
    "rows_table",
    "schedule_table",
    "verdict",
    "write_html",
]
