"""The report's plots as a reader sees them, on hand-made run directories: no line hidden
under another, log axes labelled in durations, legends readable, and a sentence instead of
a single-point token plot (the report and notebook 06 alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from authzkit.loadtest.read import tables as report
from authzkit.loadtest.read.plots import PLOTS, shown_plots, write_plots
from authzkit.loadtest.read.plots.over_time import (
    latency_figure,
    requests_per_second_figure,
    same_rate_groups,
)
from authzkit.loadtest.read.plots.spectra import aggregated_twin, spectrum_figure
from authzkit.loadtest.read.plots.style import LEGEND_POINTS, duration_label, log_latency_axis
from authzkit.loadtest.read.plots.tokens import token_calls_note
from authzkit.loadtest.read.run import AGGREGATED

from support.report_runs import AUTHORIZE, TOKEN, entry, write_histograms, write_run

FAST = {1_000: 990, 3_000: 10}  # 1 000 calls of 1 ms, a few of 3 ms


def tick_labels(figure: Figure) -> list[str]:
    """Every y tick label of ``figure`` once drawn (tick labels exist only after a draw)."""
    FigureCanvasAgg(figure).draw()  # type: ignore[no-untyped-call]
    return [
        label.get_text()
        for axes in figure.axes
        for label in axes.get_yticklabels()
        if label.get_text()
    ]


def legend_entries(figure: Figure) -> list[tuple[str, float]]:
    """(text, font size in points) of every legend entry of ``figure``."""
    return [
        (text.get_text(), float(text.get_fontsize()))
        for axes in figure.axes
        if (legend := axes.get_legend()) is not None
        for text in legend.get_texts()
    ]


@pytest.mark.parametrize(
    ("ms", "label"),
    [
        (40.0, "40 ms"),
        (1.0, "1 ms"),
        (2.0000000000000004, "2 ms"),
        (0.5, "500 µs"),
        (0.05, "50 µs"),
        (2000.0, "2 s"),
        (1500.0, "1.5 s"),
    ],
)
def test_duration_label(ms: float, label: str) -> None:
    assert duration_label(ms) == label


def test_log_axis_reads_as_durations() -> None:
    figure = Figure()
    axes = figure.subplots()
    axes.plot([0, 1, 2], [0.3, 40.0, 600.0])
    log_latency_axis(axes)
    labels = tick_labels(figure)
    assert {"1 ms", "10 ms", "50 ms", "500 ms"} <= set(labels), labels
    assert not any("10^" in text or "$" in text or "\u00d7" in text for text in labels), labels


def write_timeline(directory: Path, records: list[tuple[int, str, int, int]]) -> Path:
    """``timeline.json`` of (second, row, p50 µs, p99 µs) records."""
    (directory / "timeline.json").write_text(
        json.dumps(
            {
                "start": 0,
                "unit": "us",
                "records": [
                    {"second": second, "row": row, "count": 100, "p50": p50, "p99": p99, "max": p99}
                    for second, row, p50, p99 in records
                ],
            }
        )
    )
    return directory


def test_a_stall_beside_fast_calls_gets_a_log_axis_in_durations(tmp_path: Path) -> None:
    records = [
        (second, row, 800, 200_000 if second == 2 else 2_000)
        for second in range(5)
        for row in (AUTHORIZE, AGGREGATED)
    ]
    run = report.load_run(write_timeline(write_run(tmp_path / "run"), records))
    figure = latency_figure(run)
    assert all(axes.get_yscale() == "log" for axes in figure.axes)
    labels = tick_labels(figure)
    assert "1 ms" in labels and "100 ms" in labels, labels
    assert all(text.endswith(("µs", "ms", " s")) for text in labels), labels


def test_calm_latencies_keep_a_linear_axis_from_zero(tmp_path: Path) -> None:
    records = [(second, row, 800, 2_000) for second in range(5) for row in (AUTHORIZE, AGGREGATED)]
    figure = latency_figure(report.load_run(write_timeline(write_run(tmp_path / "run"), records)))
    assert all(axes.get_yscale() == "linear" and axes.get_ylim()[0] == 0 for axes in figure.axes)


def test_a_plain_scenario_draws_its_one_row_once_and_says_it_is_the_aggregate(
    tmp_path: Path,
) -> None:
    directory = write_histograms(
        write_run(tmp_path / "run"),
        {AUTHORIZE: FAST, TOKEN: {5_000: 2}, AGGREGATED: {1_000: 990, 3_000: 10, 5_000: 2}},
    )
    run = report.load_run(directory)
    assert aggregated_twin(run.histograms) == AUTHORIZE
    figure = spectrum_figure(run)
    assert figure is not None
    entries = legend_entries(figure)
    assert [text for text, _ in entries] == [
        f"{AUTHORIZE}\n= 99.80 % of {AGGREGATED}"
    ]  # the token's 2 calls draw no line
    assert len(figure.axes[0].lines) == 1  # not two lines, one exactly under the other
    assert all(size >= LEGEND_POINTS >= 10 for _, size in entries)


def test_rows_that_differ_from_their_sum_are_all_drawn(tmp_path: Path) -> None:
    directory = write_histograms(
        write_run(tmp_path / "run"),
        {
            AUTHORIZE: FAST,
            "POST authorize:solution": {2_000: 500, 4_000: 500},
            AGGREGATED: {1_000: 990, 2_000: 500, 3_000: 10, 4_000: 500},
        },
    )
    run = report.load_run(directory)
    assert aggregated_twin(run.histograms) is None
    figure = spectrum_figure(run)
    assert figure is not None
    assert [text for text, _ in legend_entries(figure)] == [
        AUTHORIZE,
        "POST authorize:solution",
        AGGREGATED,
    ]


def test_legends_are_as_large_as_the_tick_labels(tmp_path: Path) -> None:
    records = [(second, row, 800, 2_000) for second in range(5) for row in (AUTHORIZE, AGGREGATED)]
    figure = latency_figure(report.load_run(write_timeline(write_run(tmp_path / "run"), records)))
    tick_size = float(figure.axes[0].get_yticklabels()[0].get_fontsize())
    assert legend_entries(figure)
    assert all(size >= tick_size for _, size in legend_entries(figure))


def test_a_single_token_lifetime_is_a_sentence_not_a_plot(tmp_path: Path) -> None:
    directory = write_run(tmp_path / "run")
    (directory / "run.json").write_text(json.dumps({"scenario": "authorize", "token_ttl": 60}))
    run = report.load_run(directory)
    note = token_calls_note(run)
    assert note == (
        "Token calls: 2 (the run did not span several token lifetimes; nothing to plot)."
    )
    shown = shown_plots(run, write_plots(run, tmp_path / "plots"))
    assert note in shown
    assert not any(isinstance(item, Path) and item.name == PLOTS[2] for item in shown)
    assert [item.name for item in shown if isinstance(item, Path)][:2] == list(PLOTS[:2])


def test_token_calls_over_several_lifetimes_are_plotted(tmp_path: Path) -> None:
    run = report.load_run(write_run(tmp_path / "run"))  # 2 calls, lifetime unknown
    assert token_calls_note(run) is None
    shown = shown_plots(run, write_plots(run, tmp_path / "plots"))
    assert tmp_path / "plots" / PLOTS[2] in shown


def test_rows_at_the_same_rate_are_one_line_naming_them_all() -> None:
    flow = pd.Series([45.0, 158.0, 154.0, 13.0])
    nearly = flow + pd.Series([2.0, 0.0, -2.0, -4.0])  # within 2 % of the peak, each second
    series = {
        "FLOW challenge round trip": flow,
        "POST authorize": nearly,
        "POST keys": pd.Series([1.0, 0.0, 0.0, 1.0]),
        "POST token": flow * 2,
    }
    assert same_rate_groups(series) == [
        ["FLOW challenge round trip", "POST authorize"],
        ["POST keys"],
        ["POST token"],
    ]


def test_the_requests_plot_draws_a_round_trip_once(tmp_path: Path) -> None:
    directory = write_run(tmp_path / "run")
    steps = [
        entry(kind, name, {10: 400})
        for kind, name in (
            ("POST", "authorize"),
            ("JWE", "build_solution"),
            ("POST", "authorize:solution"),
        )
    ]
    (directory / "stats.json").write_text(json.dumps(steps))
    figure = requests_per_second_figure(report.load_run(directory))
    assert [text for text, _ in legend_entries(figure)] == [
        "JWE build_solution\nPOST authorize\nPOST authorize:solution\n(the same rate: one line)"
    ]
    assert len(figure.axes[0].lines) == 1
