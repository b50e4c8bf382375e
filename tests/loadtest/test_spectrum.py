"""The histogram side of the report on hand-made run directories: percentile spectra,
response vs service time, the per-second timeline, and ``--compare`` judged on histograms.

Histograms are built from known values with :mod:`authzkit.loadtest.record.histograms`, so every
expected percentile is known exactly (HdrHistogram keeps values within 0.1 %).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.loadtest.read import spectrum as spectrum_tables, tables as report
from authzkit.loadtest.read.html import write_html
from authzkit.loadtest.read.plots import COMPARE_PLOT, PLOTS, SERVICE_TIME_PLOT, SPECTRUM_PLOT
from authzkit.loadtest.read.run import AGGREGATED
from authzkit.loadtest.record.histograms import new_histogram

from support.report_runs import AUTHORIZE, TOKEN, histogram, write_histograms, write_run


def within(value: float, expected: float) -> bool:
    """HdrHistogram's 3 significant digits: within 0.1 % (and 1 µs)."""
    return abs(value - expected) <= expected * 0.001 + 1


# 1 … 10 000 µs once each: the p-th percentile is p times 100 µs.
UNIFORM = {value: 1 for value in range(1, 10_001)}
# 1 000 requests: 980 at 1 ms, 20 at 3 ms (p99 = 3 ms), and the same with 9 ms (slow).
BASE = {1_000: 980, 3_000: 20}
SLOW = {1_000: 980, 9_000: 20}


def test_spectrum_values_are_the_known_percentiles() -> None:
    points = spectrum_tables.spectrum(histogram(UNIFORM))
    assert len(points) > 20 and points["percentile"].is_monotonic_increasing
    assert points["percentile"].max() >= 99.99 - 1e-9  # the axis reaches four nines
    assert points["percentile"].max() < 100.0  # the infinite 100 % step is left out
    for percent, value in zip(points["percentile"], points["latency_us"], strict=True):
        assert within(value, max(percent * 100, 1)), (percent, value)
    assert points["one_in"].tolist() == pytest.approx(
        [100 / (100 - p) for p in points["percentile"]]
    )
    assert spectrum_tables.spectrum(new_histogram()).empty


def test_run_histograms_table_and_spectrum_plot(tmp_path: Path) -> None:
    directory = write_histograms(
        write_run(tmp_path / "run"), {AUTHORIZE: UNIFORM, TOKEN: {5_000: 2}}
    )
    run = report.load_run(directory)
    table = spectrum_tables.histogram_table(run.histograms).set_index("row")
    assert table.loc[AUTHORIZE, "count"] == 10_000
    for column, percent in spectrum_tables.HISTOGRAM_COLUMNS.items():
        assert within(table.loc[AUTHORIZE, column], percent * 100), column
    assert table.loc[AGGREGATED, "count"] == 10_002
    assert within(table.loc[TOKEN, "p99"], 5_000)
    assert not run.service_times  # a closed-loop run: no service times
    written = [p.name for p in write_html(run).parent.glob("*.png")]
    assert SPECTRUM_PLOT in written and SERVICE_TIME_PLOT not in written
    html = (directory / "report.html").read_text()
    assert ">5.00 ms<" in html  # the token row's p99, from its histogram, in its unit
    assert html.count("data:image/png;base64,") == len(PLOTS) + 1
    assert 'src="http' not in html and "<script" not in html


def test_single_value_rows_draw_no_spectrum(tmp_path: Path) -> None:
    """A row whose spectrum is one point carries no line: no plot of it."""
    run = report.load_run(write_histograms(write_run(tmp_path / "run"), {TOKEN: {5_000: 3}}))
    assert len(spectrum_tables.spectrum(run.histograms[TOKEN])) == 1
    html = write_html(run).read_text()
    assert not (tmp_path / "run" / SPECTRUM_PLOT).exists()
    assert html.count("data:image/png;base64,") == len(PLOTS)


@pytest.mark.parametrize("layout", ["nested", "second file"])
def test_response_vs_service_time(tmp_path: Path, layout: str) -> None:
    directory = write_histograms(
        write_run(tmp_path / "run"), {AUTHORIZE: SLOW}, service={AUTHORIZE: BASE}, layout=layout
    )
    summary = json.loads((directory / "summary.json").read_text())
    summary["schedule"] = {
        "rate": 200,
        "intended": 1000,
        "sent": 1000,
        "late": 20,
        "lag_p99_us": 8000,
        "cap_reached": 0,
    }
    (directory / "summary.json").write_text(json.dumps(summary))
    run = report.load_run(directory)
    assert within(
        spectrum_tables.histogram_table(run.histograms).set_index("row").loc[AUTHORIZE, "p99"],
        9_000,
    )
    assert within(
        spectrum_tables.histogram_table(run.service_times).set_index("row").loc[AUTHORIZE, "p99"],
        3_000,
    )
    html = write_html(run).read_text()
    assert (directory / SERVICE_TIME_PLOT).stat().st_size > 1000
    assert html.count("data:image/png;base64,") == len(PLOTS) + 2
    # The schedule in words and units: the lag p99 of 8,000 µs reads as 8 ms.
    assert "Service time by row" in html and "schedule lag p99" in html
    assert "8.00 ms" in html and "lag_p99_us" not in html


def test_histogram_compare_flags_the_built_in_p99_regression(tmp_path: Path) -> None:
    """Locust's numbers are identical in both runs; only the histograms' p99 moved."""
    base = report.load_run(write_histograms(write_run(tmp_path / "base"), {AUTHORIZE: BASE}))
    slow = report.load_run(write_histograms(write_run(tmp_path / "slow"), {AUTHORIZE: SLOW}))
    compared = report.compare_histograms(slow, base).set_index("row")
    assert within(compared.loc[AUTHORIZE, "p99_us_baseline"], 3_000)
    assert within(compared.loc[AUTHORIZE, "p99_us_current"], 9_000)
    assert compared.loc[AUTHORIZE, "p99_us_change"] == pytest.approx(2.0, rel=0.01)
    assert compared.loc[AUTHORIZE, "p50_us_change"] == pytest.approx(0.0, abs=0.001)

    comparison = report.compare(slow, base)
    assert (comparison["p95_delta"] == 0).all()  # Locust's p95 sees nothing
    found = report.regressions(comparison, max_latency_increase=0.2)
    assert found == [
        "POST authorize: p99 3.00 ms → 9.01 ms (+200%, limit +20%; histograms)",
        "Aggregated: p99 3.00 ms → 9.01 ms (+200%, limit +20%; histograms)",
    ]
    assert report.regressions(report.compare(slow, slow), max_latency_increase=0.0) == []
    assert report.regressions(report.compare(base, slow), max_latency_increase=0.0) == []
    assert "p99_us_change" in report.format_comparison(comparison)


def test_compare_command_judges_histograms_and_overlays_spectra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_histograms(write_run(tmp_path / "base"), {AUTHORIZE: BASE})
    slow = write_histograms(write_run(tmp_path / "slow"), {AUTHORIZE: SLOW})
    assert main(["report", str(slow), "--compare", str(base), "--max-regression", "20"]) == 1
    assert "regression: POST authorize: p99 3.00 ms → 9.01 ms" in capsys.readouterr().out
    assert main(["report", str(slow), "--compare", str(slow), "--max-regression", "0"]) == 0

    html = write_html(report.load_run(slow), baseline=report.load_run(base)).read_text()
    assert (slow / COMPARE_PLOT).stat().st_size > 1000
    assert html.count("data:image/png;base64,") == len(PLOTS) + 2  # spectrum + overlay
    assert "Compared with" in html and "3.00 ms → 9.01 ms (+200.1%)" in html


def test_compare_without_histograms_on_one_side_uses_p95(tmp_path: Path) -> None:
    """A baseline from before histograms: today's p95 rule, and no overlay."""
    old = report.load_run(write_run(tmp_path / "old"))
    new = report.load_run(write_histograms(write_run(tmp_path / "new", slow=30), {AUTHORIZE: SLOW}))
    assert report.compare_histograms(new, old).empty
    found = report.regressions(report.compare(new, old), max_latency_increase=0.2)
    assert any(line.startswith("POST authorize: p95 20 → 50 ms") for line in found)
    write_html(new, baseline=old)
    assert not (tmp_path / "new" / COMPARE_PLOT).exists()


HEADER = (
    "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,"
    "99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count"
)


def history_line(second: int, name: str, p50: str, p99: str, total: int) -> str:
    kind = "" if name == AGGREGATED else "POST"
    return (
        f"{1_800_000_000 + second},5,{kind},{name},10,0,{p50},{p50},{p50},{p50},{p99},"
        f"{p99},{p99},{p99},{p99},{p99},{p99},{total},0"
    )


def test_timeline_drops_samples_that_measured_nothing(tmp_path: Path) -> None:
    directory = write_run(tmp_path / "run")
    lines = [
        HEADER,
        history_line(0, AGGREGATED, "N/A", "N/A", 0),  # before any request
        history_line(1, "authorize", "0", "0", 40),  # Locust's empty window
        history_line(1, AGGREGATED, "0", "0", 40),
        history_line(2, "authorize", "10", "50", 80),
        history_line(2, AGGREGATED, "10", "50", 80),
        history_line(3, AGGREGATED, "12", "70", 120),
    ]
    (directory / "locust_stats_history.csv").write_text("\n".join(lines) + "\n")
    samples = report.timeline(report.load_run(directory))
    assert samples.to_dict("records") == [
        {"elapsed_s": 2, "row": AUTHORIZE, "p50_ms": 10.0, "p99_ms": 50.0},
        {"elapsed_s": 2, "row": AGGREGATED, "p50_ms": 10.0, "p99_ms": 50.0},
        {"elapsed_s": 3, "row": AGGREGATED, "p50_ms": 12.0, "p99_ms": 70.0},
    ]
    assert (directory / PLOTS[0]) == write_html(report.load_run(directory)).with_name(PLOTS[0])
    assert (directory / PLOTS[0]).stat().st_size > 1000
