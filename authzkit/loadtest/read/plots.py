"""The report's PNGs, drawn with matplotlib's Agg canvas.

Using ``Figure`` + ``FigureCanvasAgg`` directly (no pyplot, no global backend) leaves a
notebook's inline backend alone and works on machines without a display.

The three :data:`PLOTS` are always written (saying so when they have nothing to show); the
histogram plots (:data:`SPECTRUM_PLOT`, :data:`SERVICE_TIME_PLOT`, :data:`COMPARE_PLOT`) only
when the run holds the distributions they draw, as a line of at least two points.

What a reader of the report (or notebook 06) must be able to see: no line hidden exactly
under another (a plain scenario's one request row *is* the aggregate, so it is drawn once and
labelled so), legends at the size of the tick labels, log axes labelled as durations
("40 ms", "1 s"), and a sentence instead of a plot of a single point (:func:`shown_plots`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from hdrh.histogram import HdrHistogram
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from authzkit.loadtest.read.spectrum import NINES, spectrum
from authzkit.loadtest.read.tables import AGGREGATED, TOKEN_ROW, Run, timeline, timeline_source

PLOTS = ("latency_percentiles.png", "requests_per_second.png", "token_calls.png")
SPECTRUM_PLOT = "latency_spectrum.png"
SERVICE_TIME_PLOT = "response_vs_service_time.png"
COMPARE_PLOT = "compare_spectrum.png"


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


def row_colors(run: Run) -> dict[str, str]:
    """Row label (``"POST authorize"``, ``"Aggregated"``) → its colour in every plot."""
    labels = [
        AGGREGATED if name == AGGREGATED else f"{kind} {name}"
        for kind, name in zip(run.rows["type"], run.rows["name"], strict=True)
    ]
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


LEGEND_POINTS = 11  # the tick labels' size or more: "small" (8 pt) read as a footnote
TWIN_SHARE = 0.99  # a row with this share of the aggregate's requests draws the same line
SAME_RATE = 0.02  # rows this close every second draw one line (named for all of them)
LOG_SPAN = 100  # values spanning more than this factor get a logarithmic latency axis


def _legend(axes: Axes) -> None:
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


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=90, bbox_inches="tight")
    return path


def _empty(axes: Axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    axes.set_xticks([])
    axes.set_yticks([])


def latency(run: Run, path: Path) -> Path:
    """:func:`latency_figure` saved to ``path``."""
    return _save(latency_figure(run), path)


def latency_figure(run: Run) -> Figure:
    """p50 and p99 second by second: the aggregate (left) and each row's p99 (right).

    From the run's per-second histograms (the requests completed in each second) when it
    has them, else from Locust's history (each sample covers its last 10 s); seconds that
    measured nothing are left out rather than drawn as a zero. A logarithmic y axis when
    the values span more than two decades (a stall beside sub-millisecond decisions)."""
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    samples = timeline(run)
    if samples.empty:
        _empty(left, "no per-second latencies recorded")
        _empty(right, "")
        return figure
    colors = row_colors(run)
    source = timeline_source(run)
    total = samples[samples["row"] == AGGREGATED]
    for column, style in (("p50_ms", "-"), ("p99_ms", "--")):
        left.plot(
            total["elapsed_s"],
            total[column],
            style,
            marker=".",
            label=column[:3],
            color=colors.get(AGGREGATED),
        )
    left.set(title=f"Aggregated p50 / p99 ({source})", xlabel="elapsed s", ylabel="ms")
    _legend(left)
    for row, rows in samples[samples["row"] != AGGREGATED].groupby("row"):
        if len(rows) >= 2:  # one sample is a dot, not a line over time
            right.plot(
                rows["elapsed_s"],
                rows["p99_ms"],
                marker=".",
                label=str(row),
                color=colors.get(str(row)),
            )
    right.set(title="p99 per row", xlabel="elapsed s", ylabel="ms")
    _legend(right)
    _latency_scale(samples, left, right)
    return figure


def _latency_scale(samples: pd.DataFrame, *axes: Axes) -> None:
    """Log (labelled in durations) when the values span more than :data:`LOG_SPAN`: a stall
    beside sub-millisecond decisions; else linear from zero."""
    values = samples[["p50_ms", "p99_ms"]].to_numpy().ravel()
    values = values[values > 0]
    wide = values.size > 0 and values.max() / values.min() > LOG_SPAN
    for each in axes:
        if wide:
            log_latency_axis(each)
        else:
            each.set_ylim(0, None)


def requests_per_second(run: Run, path: Path) -> Path:
    """:func:`requests_per_second_figure` saved to ``path``."""
    return _save(requests_per_second_figure(run), path)


def requests_per_second_figure(run: Run) -> Figure:
    """Requests per second of every row, and failures per second, second by second. Rows
    at the same rate (a round trip's steps, one of each per flow) are one line naming them
    all: drawn apart, each would lie exactly under the next."""
    figure = Figure(figsize=(11, 4))
    axes = figure.subplots()
    per_second = run.per_second
    if per_second.empty:
        _empty(axes, "no requests")
        return figure
    colors = row_colors(run)
    series = {
        f"{kind} {name}": rows.set_index("elapsed_s")["requests"]
        for (kind, name), rows in per_second.groupby(["type", "name"], sort=False)
        if len(rows) >= 2
    }  # a row seen in one second only (a token fetch) is no line
    for group in same_rate_groups(series):
        first = series[group[0]]
        label = group[0] if len(group) == 1 else "\n".join([*group, "(the same rate: one line)"])
        axes.plot(first.index, first.values, label=label, color=colors.get(group[0]))
    failures = per_second.groupby("elapsed_s")["failures"].sum()
    if failures.any():
        axes.plot(failures.index, failures.values, "k--", label="failures (all rows)")
    axes.set(title="Requests per second", xlabel="elapsed s", ylabel="requests/s", ylim=(0, None))
    _legend(axes)
    return figure


def same_rate_groups(series: Mapping[str, pd.Series]) -> list[list[str]]:
    """The rows of ``series`` (row → requests by second) grouped by rate, in order: a row
    joins the first group whose rate is, every second, within :data:`SAME_RATE` of the
    pair's peak (a few pixels of the plot's height: drawn apart, they would read as one
    line) or one request."""
    groups: list[list[str]] = []
    for row, values in series.items():
        for group in groups:
            if _same_rate(series[group[0]], values):
                group.append(row)
                break
        else:
            groups.append([row])
    return groups


def _same_rate(one: pd.Series, other: pd.Series) -> bool:
    both = pd.concat([one, other], axis=1).fillna(0).to_numpy()
    gap = abs(both[:, 0] - both[:, 1])
    return bool((gap <= SAME_RATE * both.max(initial=0) + 1).all())


def token_calls(run: Run, path: Path) -> Path:
    """Cumulative token calls over the run (one line per token-related row)."""
    figure = Figure(figsize=(11, 3.5))
    axes = figure.subplots()
    per_second = run.per_second
    rows = (
        per_second[per_second["name"].str.startswith(TOKEN_ROW)]
        if not per_second.empty
        else per_second
    )
    if rows.empty:
        _empty(axes, "no token calls recorded")
        return _save(figure, path)
    colors = row_colors(run)
    for (kind, name), group in rows.groupby(["type", "name"]):
        cumulative = group.groupby("elapsed_s")["requests"].sum().cumsum()
        axes.step(
            cumulative.index,
            cumulative.values,
            where="post",
            label=f"{kind} {name}",
            color=colors.get(f"{kind} {name}"),
        )
    lifetime = token_lifetime(run)
    if lifetime:
        end = float(per_second["elapsed_s"].max())
        for number, at in enumerate(range(lifetime, int(end) + 1, lifetime)):
            axes.axvline(
                at,
                color="#999",
                linestyle=":",
                linewidth=1,
                label=f"token lifetime ({lifetime} s)" if number == 0 else None,
            )
    axes.set(
        title=f"Token calls (total {run.token_calls})",
        xlabel="elapsed s",
        ylabel="cumulative calls",
        ylim=(0, None),
    )
    _legend(axes)
    return _save(figure, path)


def token_lifetime(run: Run) -> int | None:
    """The sandbox's token lifetime in seconds when the run recorded it, else None."""
    ttl = run.meta.get("token_ttl")
    return int(ttl) if isinstance(ttl, int | float) and ttl > 0 else None


def spans_lifetimes(run: Run) -> bool:
    """Whether a token-calls plot says anything: several calls, and (lifetime known) a run
    at least two lifetimes long; otherwise the report says it in a sentence."""
    if run.token_calls <= 1:
        return False
    lifetime = token_lifetime(run)
    if lifetime is None or run.per_second.empty:
        return True
    return float(run.per_second["elapsed_s"].max()) >= 2 * lifetime


def token_calls_note(run: Run) -> str | None:
    """The sentence that replaces the token-calls plot when it would show a single step
    (one call, or a run shorter than two token lifetimes); ``None`` when the plot says
    something. The report and notebook 06 both show this."""
    if spans_lifetimes(run):
        return None
    return (
        f"Token calls: {run.token_calls} (the run did not span several token lifetimes; "
        "nothing to plot)."
    )


def shown_plots(run: Run, paths: list[Path]) -> list[Path | str]:
    """``paths`` (from :func:`write_plots`) as a reader should get them: each plot, or the
    sentence that says more than it (:func:`token_calls_note`)."""
    shown: list[Path | str] = []
    for path in paths:
        note = token_calls_note(run) if path.name == PLOTS[2] else None
        shown.append(note if note is not None else path)
    return shown


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
    return _save(figure, path) if figure is not None else None


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
    _legend(axes)
    return figure


def latency_spectrum(run: Run, path: Path) -> Path | None:
    """:func:`spectrum_figure` saved to ``path``; ``None`` (nothing written) without
    histograms."""
    figure = spectrum_figure(run)
    return _save(figure, path) if figure is not None else None


def spectrum_figure(run: Run) -> Figure | None:
    """Each row's latency by percentile up to 99.99 % from its HdrHistogram (the response
    time, from the intended start under ``--rate``); ``None`` without histograms."""
    return _spectra_figure(
        _spectra([("", "-", run.histograms)]),
        "Latency by percentile (HdrHistogram)",
        row_colors(run),
    )


def response_vs_service_time(run: Run, path: Path) -> Path | None:
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


def compare_spectra(run: Run, baseline: Run, path: Path) -> Path | None:
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


def write_plots(run: Run, out: Path | None = None, *, baseline: Run | None = None) -> list[Path]:
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
    ]
    if baseline is not None:
        written.append(compare_spectra(run, baseline, out / COMPARE_PLOT))
    return [path for path in written if path is not None]


__all__ = [
    "COMPARE_PLOT",
    "LEGEND_POINTS",
    "PALETTE",
    "PLOTS",
    "SERVICE_TIME_PLOT",
    "SPECTRUM_PLOT",
    "TWIN_SHARE",
    "aggregated_twin",
    "compare_spectra",
    "duration_label",
    "latency",
    "latency_figure",
    "latency_spectrum",
    "log_latency_axis",
    "requests_per_second",
    "requests_per_second_figure",
    "response_vs_service_time",
    "row_colors",
    "same_rate_groups",
    "shown_plots",
    "spans_lifetimes",
    "spectrum_figure",
    "token_calls",
    "token_calls_note",
    "token_lifetime",
    "write_plots",
]
