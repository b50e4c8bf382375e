"""What every plot of the report shares, so a reader follows a row from plot to plot: one
colour per row, legends beside the axes at the tick labels' size, latency axes labelled as
durations ("40 ms", "1 s"), and the Agg canvas that saves a figure.

Using ``Figure`` + ``FigureCanvasAgg`` directly (no pyplot, no global backend) leaves a
notebook's inline backend alone and works on machines without a display.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from authzkit.loadtest.read.run import AGGREGATED, RunResults

# One colour per row across every plot of a report (matplotlib's ten-colour cycle, in the
# order of the run's rows), so a reader follows a row from plot to plot.
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def row_colors(run: RunResults) -> dict[str, str]:
    """Row label (``"POST authorize"``, ``"Aggregated"``) → its colour in every plot."""
    labels = [
        AGGREGATED if name == AGGREGATED else f"{kind} {name}"
        for kind, name in zip(run.rows["type"], run.rows["name"], strict=True)
    ]
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


LEGEND_POINTS = 11  # the tick labels' size or more: "small" (8 pt) read as a footnote


def legend(axes: Axes) -> None:
    """The legend beside the axes, never over a line."""
    if axes.lines:
        axes.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=LEGEND_POINTS, frameon=False
        )


def duration_label(ms: float) -> str:
    """A latency tick as a person writes it: ``500 µs``, ``40 ms``, ``2 s``."""
    if ms >= 1000:
        return f"{ms / 1000:g} s"
    if ms >= 1:
        return f"{ms:g} ms"
    return f"{ms * 1000:g} µs"


def log_latency_axis(axes: Axes) -> None:
    """A logarithmic y axis of milliseconds labelled as durations at 1, 2 and 5 of each
    decade (matplotlib's default reads "4x10^1" and "10^0": nobody reads that as 40 ms)."""
    axes.set_yscale("log")
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: duration_label(value)))
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_ylabel("latency (log scale)")


def save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=90, bbox_inches="tight")
    return path


def empty(axes: Axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    axes.set_xticks([])
    axes.set_yticks([])


__all__ = [
    "LEGEND_POINTS",
    "PALETTE",
    "duration_label",
    "empty",
    "legend",
    "log_latency_axis",
    "row_colors",
    "save",
]
