"""How a :class:`~authzkit.loadtest.notebook.handle.Run` shows in a notebook: the report's
headline (the verdict badge, the notices that come before any number, the key figures) and
two of its plots, latency second by second and the latency spectrum, embedded as PNG data.

Imported when a run is first shown: pandas and matplotlib come with it. The plots are drawn
on matplotlib's Agg canvas (the kernel's backend is left alone) and never written to disk.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from authzkit.wire import html as h

VERDICT_TONES = {"met": "ok", "failed": "bad", "unchecked": "neutral"}
PLOT_WIDTH = "min(100%, 880px)"


def _notices(data: Any) -> list[str]:
    from authzkit.loadtest.read import notices

    found = [notices.interrupted(data)]
    if not notices.request_count(data):
        found.append(f"No request was sent: {notices.no_requests_reason(data)}")
    found += notices.shortfall(data.summary.get("schedule") or {})
    found += notices.lag_warning(data.summary)
    found += notices.workers(data.summary.get("workers") or {})
    found += notices.generator_memory(data.summary)
    return [line for line in found if line]


def figures(data: Any) -> list[tuple[str, str]]:
    """The report header's figures (scenario, load, duration, requests, throughput,
    failures, the main row's p50/p99, what a threshold judged, the drift)."""
    from authzkit.loadtest.read import headline

    return [(label, str(value)) for label, value in headline._figures(data)]


def png_html(figure: Any) -> str:
    """A matplotlib figure as an ``<img>`` of PNG data, at most the page's width."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)  # as the report saves it: Agg, tight, legends outside kept
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="" style="width:{PLOT_WIDTH}" src="data:image/png;base64,{encoded}">'


def plots_html(data: Any) -> str:
    """Latency over time and, when the run has histograms, its spectrum."""
    from authzkit.loadtest.read.plots.over_time import latency_figure
    from authzkit.loadtest.read.plots.spectra import spectrum_figure

    if data.rows.empty:
        return ""
    drawn = [latency_figure(data), spectrum_figure(data)]
    return "".join(f"<div>{png_html(figure)}</div>" for figure in drawn if figure is not None)


def run_html(run: Any, plots: str = "") -> str:
    """The card of a finished run: verdict, notices, figures, where it is, its plots."""
    from authzkit.loadtest.read.headline import verdict

    data = run.data
    css, words = verdict(data)
    tone = VERDICT_TONES.get(css, "neutral")
    cells = "".join(
        f'<div style="display:inline-block;margin:0 18px 6px 0"><b style="font-size:1.2em">'
        f'{h.escape(value)}</b><br><span style="opacity:.75">{h.escape(label)}</span></div>'
        for label, value in figures(data)
    )
    parts: list[Any] = [h.badge(line, "warn") for line in _notices(data)]
    parts += [
        h.Html(f'<div class="authzkit-run-figures">{cells}</div>'),
        h.join("run directory ", h.code(run.path), f" · exit code {run.exit_code}"),
        h.Html(plots),
    ]
    title = h.join("load test · ", data.meta.get("scenario", "?"), " ", h.badge(words, tone))
    return str(h.card(title, *parts, tone=tone, wide=True))


__all__ = ["figures", "plots_html", "png_html", "run_html"]
