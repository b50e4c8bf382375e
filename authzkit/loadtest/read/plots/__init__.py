"""The report's PNGs, drawn with matplotlib's Agg canvas, one module per family of plots.

The three :data:`PLOTS` are always written; the histogram plots only when the run holds
their distributions (docs/internals.md, "The plots").
"""

from __future__ import annotations

from pathlib import Path

from authzkit.loadtest.read.plots.endurance import drift, resources
from authzkit.loadtest.read.plots.over_time import latency, requests_per_second
from authzkit.loadtest.read.plots.spectra import (
    compare_spectra,
    latency_spectrum,
    response_vs_service_time,
)
from authzkit.loadtest.read.plots.style import LEGEND_POINTS, log_latency_axis
from authzkit.loadtest.read.plots.tokens import spans_lifetimes, token_calls, token_calls_note
from authzkit.loadtest.read.run import RunResults

PLOTS = ("latency_percentiles.png", "requests_per_second.png", "token_calls.png")
SPECTRUM_PLOT = "latency_spectrum.png"
SERVICE_TIME_PLOT = "response_vs_service_time.png"
COMPARE_PLOT = "compare_spectrum.png"
DRIFT_PLOT = "drift.png"
RESOURCES_PLOT = "resources.png"


def shown_plots(run: RunResults, paths: list[Path]) -> list[Path | str]:
    """``paths`` (from :func:`write_plots`) as a reader should get them: each plot, or the
    sentence that says more than it (:func:`token_calls_note`)."""
    shown: list[Path | str] = []
    for path in paths:
        note = token_calls_note(run) if path.name == PLOTS[2] else None
        shown.append(note if note is not None else path)
    return shown


def write_plots(
    run: RunResults, out: Path | None = None, *, baseline: RunResults | None = None
) -> list[Path]:
    """The PNGs in ``out`` (default: the run directory); returns the paths written: always
    latency over time, requests/s and token calls; the spectra where the run (and
    ``baseline``) have histograms."""
    out = Path(out) if out is not None else run.directory
    out.mkdir(parents=True, exist_ok=True)
    written = [
        latency(run, out / PLOTS[0]),
        requests_per_second(run, out / PLOTS[1]),
        token_calls(run, out / PLOTS[2]),
        latency_spectrum(run, out / SPECTRUM_PLOT),
        response_vs_service_time(run, out / SERVICE_TIME_PLOT),
        drift(run, out / DRIFT_PLOT),
        resources(run, out / RESOURCES_PLOT),
    ]
    if baseline is not None:
        written.append(compare_spectra(run, baseline, out / COMPARE_PLOT))
    return [path for path in written if path is not None]


# LEGEND_POINTS and log_latency_axis: notebook 06 styles its own plots like the report;
# spans_lifetimes: the report page says when the token-calls plot has nothing to show.
__all__ = [
    "COMPARE_PLOT",
    "DRIFT_PLOT",
    "LEGEND_POINTS",
    "PLOTS",
    "RESOURCES_PLOT",
    "SERVICE_TIME_PLOT",
    "SPECTRUM_PLOT",
    "log_latency_axis",
    "shown_plots",
    "spans_lifetimes",
    "write_plots",
]
