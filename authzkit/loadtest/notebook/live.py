"""What a run shows while it goes: a widget with a Stop button under a frontend, a line per
interval without one.

Under a frontend the cell returns at once so the kernel is free to hear Stop; how a
frontend is told apart: docs/internals.md, "A run while it goes".
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

from authzkit.loadtest.notebook.background import Figures
from authzkit.wire import html as h

LIVE_CLASS = "authzkit-live"
STOP_CLASS = "authzkit-stop"


def has_frontend() -> bool:
    """True in a kernel a person's page is connected to (see the module's docstring)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None or importlib.util.find_spec("ipywidgets") is None:
        return False
    if os.environ.get("SERVER_SOFTWARE", "").startswith("voila/"):
        return True
    return bool(getattr(kernel, "_allow_stdin", False))


def _shown(figures: Figures, seconds: float) -> list[tuple[str, str, str]]:
    """(key, label, value) of what the view shows, in order."""
    from authzkit.loadtest.read.units import duration
    from authzkit.loadtest.record.summary import RECENT_S

    elapsed = figures.elapsed_s
    return [
        ("elapsed", "elapsed", "starting" if elapsed is None else f"{elapsed:.0f} s"),
        ("remaining", "remaining", "" if elapsed is None else f"{max(seconds - elapsed, 0):.0f} s"),
        ("requests", "requests", f"{figures.requests:,}"),
        ("rps", "requests/s", "" if figures.rps is None else f"{figures.rps:.1f}"),
        ("p50", f"p50 (last {RECENT_S} s)", duration(figures.p50_us) or "-"),
        ("p99", f"p99 (last {RECENT_S} s)", duration(figures.p99_us) or "-"),
        ("failures", "failures", f"{figures.failures:,}"),
    ]


def line(figures: Figures, seconds: float) -> str:
    """One interval as one line: ``  3 s / 5 s  1,204 requests  401.3 req/s  p50 … p99 …``."""
    if figures.elapsed_s is None:
        return "  starting"
    shown = {key: value for key, _, value in _shown(figures, seconds)}
    return (
        f"  {shown['elapsed']} / {seconds:.0f} s  {shown['requests']} requests  "
        f"{shown['rps'] or '-'} req/s  p50 {shown['p50']}  p99 {shown['p99']}  "
        f"{shown['failures']} failures"
    )


def live_html(figures: Figures, seconds: float, *, title: str, state: str) -> str:
    """The widget's figures as a card (each value marked ``data-figure=…``)."""
    cells = "".join(
        f'<div style="display:inline-block;margin:0 18px 6px 0"><b data-figure="{key}" '
        f'style="font-size:1.3em">{h.escape(value or "-")}</b><br>'
        f'<span style="opacity:.75">{h.escape(label)}</span></div>'
        for key, label, value in _shown(figures, seconds)
    )
    tone = "info" if state == "running" else "warn"
    return str(
        h.card(
            h.join(title, " ", h.badge(state, tone)),
            h.Html(f'<div class="{LIVE_CLASS}" data-state="{h.escape(state)}">{cells}</div>'),
            wide=True,
        )
    )


class WidgetView:
    """The live widget: the figures card and a Stop button; the run's display at the end."""

    def __init__(self, title: str, seconds: float, stop: Callable[[], object], text: str) -> None:
        import ipywidgets as widgets

        self.title, self.seconds, self.text = title, seconds, text
        self.state = "running"
        self._last = Figures(None, 0, 0, None, None, None)
        self.figures = widgets.HTML(self._html())
        self.button = widgets.Button(description="Stop", icon="stop", button_style="danger")
        self.button.add_class(STOP_CLASS)
        self.button.on_click(lambda _: self._stop(stop))
        self.box = widgets.VBox([self.figures, self.button])

    def _html(self) -> str:
        return live_html(self._last, self.seconds, title=self.title, state=self.state)

    def _stop(self, stop: Callable[[], object]) -> None:
        self.state = "stopping"
        self.button.disabled = True
        self.button.description = "Stopping…"
        stop()
        self.figures.value = self._html()

    def show(self) -> None:
        """Display the widget, with a text fallback for a page without widgets."""
        from IPython.display import display

        bundle: dict[str, Any] = dict(self.box._repr_mimebundle_() or {})
        bundle["text/plain"] = self.text
        display(bundle, raw=True)  # type: ignore[no-untyped-call]

    def update(self, figures: Figures) -> None:
        if figures.elapsed_s is None and self._last.elapsed_s is not None:
            return  # live.json goes at the end of the run: keep the last figures
        self._last = figures
        self.figures.value = self._html()

    def finish(self, html: str) -> None:
        """The run has ended: its display replaces the figures, the button goes."""
        self.figures.value = html
        self.button.layout.display = "none"


class TextView:
    """A line per interval, printed as it comes: one per second of load, and one before."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._said: set[float | None] = set()

    def update(self, figures: Figures) -> None:
        shown = None if figures.elapsed_s is None else round(figures.elapsed_s)
        if shown in self._said or (shown is None and self._said):
            return  # the same second (live.json has not moved on), or the end's removal
        self._said.add(shown)
        print(line(figures, self.seconds), flush=True)

    def finish(self, html: str) -> None:
        """The run has ended, or failed: a line says nothing more."""


__all__ = ["LIVE_CLASS", "STOP_CLASS", "TextView", "WidgetView", "has_frontend", "line"]
