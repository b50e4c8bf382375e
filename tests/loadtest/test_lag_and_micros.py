"""The figures people read: latencies from the µs histograms in the terminal's table (a fast
service never reads ``0 ms``), and the open model's schedule lag beside the latency it
inflates, with a warning naming the generator when the lag is a large share of it."""

from __future__ import annotations

import json
from pathlib import Path

from authzkit.loadtest.child import live_totals
from authzkit.loadtest.progress import progress_line
from authzkit.loadtest.read import notices, tables
from authzkit.loadtest.read.html import write_html
from authzkit.loadtest.read.units import duration
from authzkit.loadtest.record.summary import LIVE_FILE, live_figures

from support.report_runs import AUTHORIZE, histogram, write_histograms, write_run


def _open_model(directory: Path, *, lag_p50_us: int, latency_p50_us: int) -> None:
    """An open-model run's summary: lag p50 given, latency p50 and service p50 known."""
    summary = json.loads((directory / "summary.json").read_text())
    summary["latency_us"] = {"Aggregated": {"count": 100, "p50": latency_p50_us, "p99": 5000}}
    summary["service_time_us"] = {"Aggregated": {"count": 100, "p50": 400, "p99": 900}}
    summary["schedule"] = {
        "rate": 100,
        "intended": 100,
        "sent": 100,
        "late": 0,
        "lag_p50_us": lag_p50_us,
        "lag_p99_us": 1500,
        "cap_reached": 0,
    }
    (directory / "summary.json").write_text(json.dumps(summary))
    meta = json.loads((directory / "run.json").read_text())
    (directory / "run.json").write_text(json.dumps({**meta, "rate": 100}))


def test_the_terminal_table_reads_microseconds_from_the_histograms(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run")  # Locust's whole milliseconds: 10, 20 and 50 ms
    write_histograms(run_dir, {AUTHORIZE: {430: 90, 612: 10}, "POST token": {5000: 2}})
    text = tables.summary_text(tables.load_run(run_dir))
    authorize = next(line for line in text.splitlines() if line.startswith("POST authorize"))
    assert "430 µs" in authorize and "612 µs" in authorize
    assert " ms" not in authorize  # none of Locust's rounded milliseconds


def test_a_run_without_histograms_still_shows_locust_milliseconds(tmp_path: Path) -> None:
    text = tables.summary_text(tables.load_run(write_run(tmp_path / "run")))
    authorize = next(line for line in text.splitlines() if line.startswith("POST authorize"))
    assert "10.0 ms" in authorize and "50.0 ms" in authorize


def test_a_large_schedule_lag_is_named_as_the_generator_with_its_remedy(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run")
    _open_model(run_dir, lag_p50_us=900, latency_p50_us=2000)  # 45 % of p50
    summary = tables.load_run(run_dir).summary
    [warning] = notices.lag_warning(summary)
    assert "the generator, not the service" in warning and "45%" in warning
    assert "900 µs" in warning and "2.00 ms" in warning and "--processes" in warning
    beside = notices.lag_beside_latency(summary)
    assert beside is not None and beside.startswith("schedule lag p50 900 µs, p99 1.50 ms")
    assert beside in tables.summary_text(tables.load_run(run_dir))
    page = write_html(tables.load_run(run_dir)).read_text()
    assert 'id="generator-lag"' in page and "schedule lag p50 · p99" in page


def test_a_small_lag_or_a_closed_loop_raises_nothing(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run")
    closed = tables.load_run(run_dir).summary
    assert notices.lag_warning(closed) == [] and notices.lag_beside_latency(closed) is None
    _open_model(run_dir, lag_p50_us=400, latency_p50_us=2000)  # 20 %: not more than the bar
    assert notices.lag_warning(tables.load_run(run_dir).summary) == []
    page = write_html(tables.load_run(run_dir)).read_text()
    assert 'id="generator-lag"' not in page


def test_a_run_recorded_before_lag_p50_reads_it_from_latency_minus_service(
    tmp_path: Path,
) -> None:
    run_dir = write_run(tmp_path / "run")
    _open_model(run_dir, lag_p50_us=0, latency_p50_us=2000)
    summary = tables.load_run(run_dir).summary
    del summary["schedule"]["lag_p50_us"]
    figures = notices.lag_figures(summary)
    assert figures is not None and figures["lag_p50"] == 1600  # 2,000 - 400 µs
    assert notices.lag_warning(summary)


CSV_HEADER = "Type,Name,Request Count,Failure Count,Requests/s,95%\n"


def test_the_live_line_reads_p95_from_the_histograms_not_locusts_milliseconds(
    tmp_path: Path,
) -> None:
    (tmp_path / "locust_stats.csv").write_text(CSV_HEADER + ",Aggregated,100,0,50.0,0\n")
    assert live_totals(tmp_path) == {"requests": 100, "failures": 0, "rps": 50.0, "p95_us": 0.0}
    figures = live_figures({AUTHORIZE: histogram({400: 90, 430: 10}), "POST token": histogram({})})
    assert figures == {"count": 100, "p50_us": 400, "p95_us": 430, "p99_us": 430}
    (tmp_path / LIVE_FILE).write_text(json.dumps(figures))
    totals = live_totals(tmp_path)
    assert totals is not None and duration(totals["p95_us"]) == "430 µs"


def test_a_progress_line_before_the_first_answer_shows_no_p95() -> None:
    """``p95 0 µs`` read as a service answering instantly: before any answer it is ``-``."""
    waiting = progress_line(2.0, 3.0, {"requests": 0, "failures": 0, "rps": 0.0, "p95_us": 0.0})
    assert waiting.endswith("req/s  p95 -"), waiting
    going = progress_line(4.0, 3.0, {"requests": 90, "failures": 1, "rps": 45.0, "p95_us": 430})
    assert going.split() == [
        "4s/3s",
        "90",
        "requests",
        "1",
        "failures",
        "45.0",
        "req/s",
        "p95",
        "430",
        "µs",
    ]
