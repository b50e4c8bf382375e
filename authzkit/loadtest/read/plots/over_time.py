"""The report's plots second by second: latency (p50/p99) and requests per second.

Rows at the same rate, or a request row that *is* the aggregate, are drawn once and
labelled so: drawn apart, each line would lie exactly under another.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from authzkit.loadtest.read.plots.endurance import draw_fault_marks
from authzkit.loadtest.read.plots.style import empty, legend, log_latency_axis, row_colors, save
from authzkit.loadtest.read.run import AGGREGATED, RunResults
from authzkit.loadtest.read.tables import timeline, timeline_source

SAME_RATE = 0.02  # rows this close every second draw one line (named for all of them)
LOG_SPAN = 100  # values spanning more than this factor get a logarithmic latency axis


def latency(run: RunResults, path: Path) -> Path:
    """:func:`latency_figure` saved to ``path``."""
    return save(latency_figure(run), path)


def latency_figure(run: RunResults) -> Figure:
    """p50 and p99 second by second: the aggregate (left) and each row's p99 (right).

    From the run's per-second histograms (the requests completed in each second) when it
    has them, else from Locust's history (each sample covers its last 10 s), the faults the
    sandbox injected marked where they happened; seconds that
    measured nothing are left out rather than drawn as a zero. A logarithmic y axis when
    the values span more than two decades (a stall beside sub-millisecond decisions)."""
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    samples = timeline(run)
    if samples.empty:
        empty(left, "no per-second latencies recorded")
        empty(right, "")
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
    draw_fault_marks(left, run)  # a spike beside its cause
    left.set(title=f"Aggregated p50 / p99 ({source})", xlabel="elapsed s", ylabel="ms")
    legend(left)
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
    legend(right)
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


def requests_per_second(run: RunResults, path: Path) -> Path:
    """:func:`requests_per_second_figure` saved to ``path``."""
    return save(requests_per_second_figure(run), path)


def requests_per_second_figure(run: RunResults) -> Figure:
    """Requests per second of every row, and failures per second, second by second, the
    sandbox's faults marked. Rows
    at the same rate (a round trip's steps, one of each per flow) are one line naming them
    all: drawn apart, each would lie exactly under the next."""
    figure = Figure(figsize=(11, 4))
    axes = figure.subplots()
    per_second = run.per_second
    if per_second.empty:
        empty(axes, "no requests")
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
    draw_fault_marks(axes, run, origin=float(per_second["second"].min()))
    failures = per_second.groupby("elapsed_s")["failures"].sum()
    if failures.any():
        axes.plot(failures.index, failures.values, "k--", label="failures (all rows)")
    axes.set(title="Requests per second", xlabel="elapsed s", ylabel="requests/s", ylim=(0, None))
    legend(axes)
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


__all__ = [
    "latency",
    "latency_figure",
    "requests_per_second",
    "requests_per_second_figure",
    "same_rate_groups",
]
