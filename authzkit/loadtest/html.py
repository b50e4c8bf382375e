"""``report.html``: a run's tables and plots in one self-contained page.

The PNGs are embedded as data URIs, so the page is one file to attach anywhere. This module
imports both :mod:`~authzkit.loadtest.report` (the tables) and
:mod:`~authzkit.loadtest.plots` (the images); neither imports it back.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import pandas as pd

from authzkit.loadtest.plots import write_plots
from authzkit.loadtest.report import Run, compare_histograms, failures_by_type
from authzkit.loadtest.spectrum import histogram_table


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _pre(data: object) -> str:
    return f"<pre>{html.escape(json.dumps(data, indent=2, sort_keys=True))}</pre>"


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda v: f"{v:.2f}", na_rep="")


def _histogram_parts(run: Run, baseline: Run | None) -> list[str]:
    """The histogram tables (µs): latency, service time and schedule (open model), and the
    comparison with ``baseline``; nothing for a run recorded before histograms."""
    parts = []
    if run.histograms:
        parts += ["<h2>Latency by percentile (µs, HdrHistogram)</h2>",
                  _table(histogram_table(run.histograms))]
    if run.service_times:
        parts += ["<h2>Service time by percentile (µs, from the actual send)</h2>",
                  _table(histogram_table(run.service_times))]
    if run.summary.get("schedule"):
        parts += ["<h2>Schedule (open model)</h2>", _pre(run.summary["schedule"])]
    if baseline is not None:
        compared = compare_histograms(run, baseline)
        if not compared.empty:
            parts += [f"<h2>Compared with {html.escape(str(baseline.directory))} (µs; "
                      "change = this run vs the baseline)</h2>", _table(compared)]
    return parts


def write_html(run: Run, out: Path | None = None, *, baseline: Run | None = None) -> Path:
    """One self-contained ``report.html`` in ``out`` (default: the run directory): tables,
    thresholds, sandbox counters, the histogram percentiles and the PNGs embedded, no
    external files; with ``baseline``, the histogram comparison and the overlaid spectra."""
    out = Path(out) if out is not None else run.directory
    images = write_plots(run, out, baseline=baseline)
    path = out / "report.html"
    verdict = run.summary.get("thresholds", {})
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>authzkit load test</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}img{max-width:100%}"
        "</style></head><body><h1>authzkit load test</h1>",
        _pre({k: v for k, v in run.meta.items() if k != "command"}),
        "<h2>Rows (ms; rps = requests per second)</h2>",
        run.rows.to_html(index=False, float_format=lambda v: f"{v:.2f}"),
        "<h2>Failures by error type</h2>", failures_by_type(run).to_html(index=False),
        *_histogram_parts(run, baseline),
    ]
    if verdict:
        parts += ["<h2>Thresholds</h2>", _pre(verdict)]
    if run.sandbox_stats:
        parts += ["<h2>Sandbox counters</h2>", _pre(run.sandbox_stats)]
    parts += ["<h2>Plots</h2>", *(_image(p) for p in images), "</body></html>"]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = ["write_html"]
