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

from authzkit.loadtest.plots import write_plots
from authzkit.loadtest.report import Run, failures_by_type


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _pre(data: object) -> str:
    return f"<pre>{html.escape(json.dumps(data, indent=2, sort_keys=True))}</pre>"


def write_html(run: Run, out: Path | None = None) -> Path:
    """One self-contained ``report.html`` in ``out`` (default: the run directory): tables,
    thresholds, sandbox counters and the PNGs embedded, no external files."""
    out = Path(out) if out is not None else run.directory
    images = write_plots(run, out)
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
    ]
    if verdict:
        parts += ["<h2>Thresholds</h2>", _pre(verdict)]
    if run.sandbox_stats:
        parts += ["<h2>Sandbox counters</h2>", _pre(run.sandbox_stats)]
    parts += ["<h2>Plots</h2>", *(_image(p) for p in images), "</body></html>"]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = ["write_html"]
