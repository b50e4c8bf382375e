"""The latency spectra: latency by percentile up to 99.99 % from the HdrHistograms, for a
run, its response against its service time, and two runs compared.

Drawn only where the run holds the distributions, as a line of at least two points; the one
request row that holds (nearly) all of the aggregate's requests is drawn once with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from hdrh.histogram import HdrHistogram
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from authzkit.loadtest.read.plots.style import legend, row_colors, save
from authzkit.loadtest.read.run import AGGREGATED, RunResults
from authzkit.loadtest.read.spectrum import NINES, spectrum

TWIN_SHARE = 0.99  # a row with this share of the aggregate's requests draws the same line


def _nines_axis(axes: Axes, largest_us: float) -> float:
    """Log "nines" x axis (50 … 99.99 %) and a µs or ms y axis; returns the y divisor."""
    axes.set_xscale("log")
    axes.set_xticks([100.0 / (100.0 - p) for p in NINES], [f"{p:g}%" for p in NINES])
    axes.minorticks_off()
    axes.set_xlim(1.0, 100.0 / (100.0 - NINES[-1]) * 1.5)
    axes.set(xlabel="percentile", ylabel="ms" if largest_us >= 1_000 else "µs")
    axes.grid(True, which="major", alpha=0.3)
    return 1000.0 if largest_us >= 1_000 else 1.0


class _Line(NamedTuple):
    """One spectrum line: its legend label, the row it belongs to (its colour), its style."""

    label: str
    row: str
    style: str
    points: pd.DataFrame


def aggregated_twin(histograms: Mapping[str, HdrHistogram]) -> str | None:
    """The row whose line would lie exactly under Aggregated's: the one row holding at least
    :data:`TWIN_SHARE` of the aggregate's requests (a plain scenario's only request row,
    beside a token call or two); ``None`` when the rows differ from their sum."""
    total = histograms.get(AGGREGATED)
    if total is None or not total.get_total_count():
        return None
    for row, histogram in histograms.items():
        if (
            row != AGGREGATED
            and histogram.get_total_count() >= TWIN_SHARE * total.get_total_count()
        ):
            return row
    return None


def _twin_label(row: str, histograms: Mapping[str, HdrHistogram]) -> str:
    """``POST authorize`` over ``= Aggregated`` or ``= 99.98 % of Aggregated`` (two short
    lines: a legend beside the axes must not squeeze them)."""
    share = histograms[row].get_total_count() / histograms[AGGREGATED].get_total_count()
    if share >= 1:
        return f"{row}\n= {AGGREGATED}"
    return f"{row}\n= {share * 100:.2f} % of {AGGREGATED}"


def _spectra(sets: list[tuple[str, str, Mapping[str, HdrHistogram]]]) -> list[_Line]:
    """The lines of each (label prefix, style, histograms): every row's spectrum of two
    points or more, Aggregated drawn once with its twin row (:func:`aggregated_twin`)."""
    lines = []
    for prefix, style, histograms in sets:
        twin = aggregated_twin(histograms)
        for row in histograms:
            if twin is not None and row == AGGREGATED:
                continue
            points = spectrum(histograms[row])
            if len(points) >= 2:
                label = _twin_label(row, histograms) if row == twin else row
                lines.append(_Line(f"{prefix}{label}", row, style, points))
    return lines


def _draw_spectra(
    lines: list[_Line], title: str, path: Path, colors: Mapping[str, str] | None = None
) -> Path | None:
    """:func:`_spectra_figure` saved to ``path``; ``None`` (nothing written) without lines."""
    figure = _spectra_figure(lines, title, colors)
    return save(figure, path) if figure is not None else None


def _spectra_figure(
    lines: list[_Line], title: str, colors: Mapping[str, str] | None = None
) -> Figure | None:
    """One spectrum figure of ``lines``; ``None`` when there are none."""
    if not lines:
        return None
    figure = Figure(figsize=(11, 4.5))
    axes = figure.subplots()
    divisor = _nines_axis(axes, max(float(line.points["latency_us"].max()) for line in lines))
    by_row: dict[str, Any] = dict(colors or {})  # a row's colour, the same in every line
    for line in lines:
        drawn = axes.plot(
            line.points["one_in"],
            line.points["latency_us"] / divisor,
            line.style,
            label=line.label,
            color=by_row.get(line.row),
        )
        by_row.setdefault(line.row, drawn[0].get_color())
    axes.set_ylim(bottom=0)  # after the lines: the top follows the data
    axes.set_title(title)
    legend(axes)
    return figure


def latency_spectrum(run: RunResults, path: Path) -> Path | None:
    """:func:`spectrum_figure` saved to ``path``; ``None`` (nothing written) without
    histograms."""
    figure = spectrum_figure(run)
    return save(figure, path) if figure is not None else None


def spectrum_figure(run: RunResults) -> Figure | None:
    """Each row's latency by percentile up to 99.99 % from its HdrHistogram (the response
    time, from the intended start under ``--rate``); ``None`` without histograms."""
    return _spectra_figure(
        _spectra([("", "-", run.histograms)]),
        "Latency by percentile (HdrHistogram)",
        row_colors(run),
    )


def response_vs_service_time(run: RunResults, path: Path) -> Path | None:
    """Response time (from the intended start, solid) beside service time (from the actual
    send, dashed) per row, on the same spectrum axes: the gap is the time requests waited
    behind a stall. ``None`` unless the run has service-time histograms (open model)."""
    if not run.service_times:
        return None
    return _draw_spectra(
        _spectra([("response: ", "-", run.histograms), ("service: ", "--", run.service_times)]),
        "Response time vs service time by percentile",
        path,
        row_colors(run),
    )


def compare_spectra(run: RunResults, baseline: RunResults, path: Path) -> Path | None:
    """Both runs' spectra overlaid (this run solid, the baseline dashed); ``None`` unless
    both have histograms."""
    if not run.histograms or not baseline.histograms:
        return None
    return _draw_spectra(
        _spectra([("this run: ", "-", run.histograms), ("baseline: ", "--", baseline.histograms)]),
        f"Latency by percentile: {run.directory.name} vs baseline {baseline.directory.name}",
        path,
        row_colors(run),
    )


__all__ = [
    "TWIN_SHARE",
    "aggregated_twin",
    "compare_spectra",
    "latency_spectrum",
    "response_vs_service_time",
    "spectrum_figure",
]
