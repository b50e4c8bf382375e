"""``report.html``: a run as a person reads it, in one self-contained page.

Verdict and figures first, then thresholds, sections and plots; PNGs embedded as data URIs.
matplotlib is imported only to draw (docs/internals.md, "The page").
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from authzkit.loadtest.read import figures, notices, thresholds
from authzkit.loadtest.read.headline import headline
from authzkit.loadtest.read.sections import (
    comparison_section,
    failures_table,
    key_values,
    rows_table,
    schedule_table,
)
from authzkit.loadtest.read.tables import RunResults

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


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _plots(run: RunResults, images: list[Path]) -> list[str]:
    """The plots that carry information; a sentence in place of a single-point one."""
    from authzkit.loadtest.read.plots import spans_lifetimes

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
    run: RunResults,
    out: Path | None = None,
    *,
    baseline: RunResults | None = None,
    regressions: list[str] | None = None,
    max_regression: float | None = None,
    plots: bool = True,
) -> Path:
    """One self-contained ``report.html`` in ``out`` (default: the run directory); with
    ``baseline``, the histogram comparison and the overlaid spectra; with ``regressions``
    (what ``--max-regression`` found; ``[]`` for none), the badge says it. ``plots=False``
    (an interrupted run, whose command exits at once) leaves the PNGs to ``authzkit report``."""
    out = Path(out) if out is not None else run.directory
    images: list[Path] = []
    if plots:
        from authzkit.loadtest.read.plots import write_plots

        images = write_plots(run, out, baseline=baseline)
    path = out / "report.html"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>authzkit load test: {html.escape(str(run.meta.get('scenario', '')))}"
        f"</title><style>{_STYLE}</style></head><body>",
        *headline(run, regressions, max_regression),
        *thresholds.section(run.summary),
        "<h2>Rows</h2>",
        rows_table(run),
        *figures.checks_section(run),
        "<h2>Failures by error type</h2>",
        failures_table(run),
        *figures.data_section(run),
        *figures.phases_note(run),
    ]
    if run.service_times:
        parts += [
            "<h2>Service time by row (open model: from the actual send)</h2>",
            rows_table(run, service=True),
        ]
    if run.summary.get("schedule"):
        stopped = notices.run_seconds(run) if run.meta.get("interrupted") else None
        parts += [
            "<h2>Schedule (open model)</h2>",
            schedule_table(run.summary["schedule"], stopped_after=stopped),
        ]
    if baseline is not None:
        parts += [
            f'<p class="note" id="model-mismatch">{html.escape(line)}</p>'
            for line in notices.model_mismatch(run, baseline)
        ]
        parts += comparison_section(run, baseline)
    drift = notices.drift_line(run.summary)
    if drift is not None:
        parts += ["<h2>Drift</h2>", f'<p class="note" id="drift">{html.escape(drift)}</p>']
    parts += [
        "<h2>Run parameters</h2>",
        key_values({k: v for k, v in run.meta.items() if k != "locust_command"}, labels=True),
    ]
    if run.sandbox_stats:
        parts += ["<h2>Sandbox counters (during the run)</h2>", key_values(run.sandbox_stats)]
    drawn = (
        _plots(run, images)
        if plots
        else [
            f'<p class="note" id="no-plots">Not drawn when a run is interrupted (the command '
            f"exits at once): <code>authzkit report {html.escape(str(run.directory))}</code> "
            "draws them.</p>"
        ]
    )
    parts += ['<h2>Plots</h2><div class="plots">', *drawn, "</div>", "</body></html>"]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = ["write_html"]
