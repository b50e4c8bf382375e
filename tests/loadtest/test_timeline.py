"""Second-by-second latency in-process: what each second holds, merged from many drains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from authzkit.loadtest.read import tables as report
from authzkit.loadtest.record.histograms import AGGREGATED, LatencyRecorder
from authzkit.loadtest.record.timeline import TIMELINE_FILE, SecondRecorder, TimelineMerger

T0 = 1_800_000_000.0  # an epoch second


def by_row_and_second(table: dict[str, Any]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(r["second"], r["row"]): r for r in table["records"]}


def test_each_request_lands_in_the_second_it_completed() -> None:
    recorder = SecondRecorder()
    for i in range(100):  # second 0: 1.000 … 1.099 ms
        recorder.record("POST", "authorize", 1.0 + i / 1000, T0 + i / 200)
    recorder.record("POST", "authorize", 500.0, T0 + 1.2)  # second 1: one held answer
    recorder.record("GET", "keys", None, T0 + 1.3)  # no time: not a latency
    merger = TimelineMerger()
    merger.add(recorder.drain())
    table = merger.table()
    assert table["start"] == int(T0) and table["unit"] == "us"
    found = by_row_and_second(table)
    assert set(found) == {
        (0, "POST authorize"),
        (0, AGGREGATED),
        (1, "POST authorize"),
        (1, AGGREGATED),
    }
    first = found[(0, "POST authorize")]
    assert first["count"] == 100
    assert abs(first["p50"] - 1_050) <= 11 and abs(first["p99"] - 1_099) <= 11  # 2 digits
    assert found[(1, AGGREGATED)]["count"] == 1
    assert abs(found[(1, AGGREGATED)]["p99"] - 500_000) <= 5_000


def test_drains_and_processes_merge_exactly() -> None:
    """A second split across two drains of one process, and the same seconds from a second
    process, add up bucket by bucket."""
    first, second = SecondRecorder(), SecondRecorder()
    merger = TimelineMerger()
    for i in range(30):
        first.record("POST", "authorize", 2.0, T0 + 0.01 * i)
    merger.add(first.drain())  # mid-second: the rest of second 0 comes with the next drain
    for i in range(30):
        first.record("POST", "authorize", 4.0, T0 + 0.5 + 0.01 * i)
        second.record("POST", "authorize", 8.0, T0 + 0.01 * i)
    for _ in range(30):
        second.record("POST", "token", 3.0, T0 + 2.5)
    merger.add(first.drain())
    merger.add(json.loads(json.dumps(second.drain())))  # as it travels in a message
    found = by_row_and_second(merger.table())
    assert found[(0, "POST authorize")]["count"] == 90
    assert found[(0, AGGREGATED)]["count"] == 90
    assert found[(2, "POST token")]["count"] == 30
    assert (1, AGGREGATED) not in found  # a second with no request has no record


def test_a_clock_stepping_back_never_reopens_a_second() -> None:
    recorder = SecondRecorder()
    recorder.record("POST", "authorize", 1.0, T0 + 5.5)
    recorder.record("POST", "authorize", 1.0, T0 + 3.5)  # the clock stepped back
    merger = TimelineMerger()
    merger.add(recorder.drain())
    table = merger.table()
    assert [(r["second"], r["count"]) for r in table["records"]] == [(0, 2), (0, 2)]
    assert table["start"] == int(T0) + 5


def test_reset_forgets_everything() -> None:
    recorder, merger = SecondRecorder(), TimelineMerger()
    recorder.record("POST", "authorize", 1.0, T0)
    merger.add(recorder.drain())
    recorder.record("POST", "authorize", 1.0, T0 + 1)
    recorder.reset()
    merger.reset()
    assert recorder.drain() == {}
    assert merger.table() == {"start": None, "unit": "us", "records": []}


def test_the_report_reads_the_timeline_before_locusts_history(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    directory.mkdir()
    (directory / "stats.json").write_text("[]")
    recorder, merger = SecondRecorder(), TimelineMerger()
    recorder.record("POST", "authorize", 0.4, T0 + 0.5)
    recorder.record("POST", "authorize", 480.0, T0 + 1.5)
    merger.add(recorder.drain())
    (directory / TIMELINE_FILE).write_text(json.dumps(merger.table()))
    run = report.load_run(directory)
    samples = report.timeline(run)
    totals = samples[samples["row"] == AGGREGATED]
    assert totals["elapsed_s"].tolist() == [0.0, 1.0]
    assert totals["p99_ms"].tolist()[0] < 1 < 400 < totals["p99_ms"].tolist()[1]  # µs kept
    assert report.timeline_source(run) == "requests completed in each second"


def test_each_time_reaches_the_run_histograms_once_through_its_second() -> None:
    """One append per request feeds both: a drained second's times go into the run's µs
    histograms too, each exactly once, also when a second is drained midway; a second that
    is over waits for the next drain (no request pays for encoding it)."""
    run = LatencyRecorder()
    recorder = SecondRecorder(run=run)
    for i in range(50):
        recorder.record("POST", "authorize", 1.0 + i / 100, T0 + i / 100)
    recorder.record("GET", "keys", None, T0 + 0.6)  # no time: in neither
    assert run.histograms == {}  # the second is still open
    recorder.drain()  # midway through second 0
    recorder.record("POST", "authorize", 7.25, T0 + 0.9)
    recorder.record("POST", "token", 3.0, T0 + 1.5)  # closes second 0
    assert run.histograms["POST authorize"].get_total_count() == 50  # the drained part
    recorder.drain()
    found = run.histograms
    assert found["POST authorize"].get_total_count() == 51
    assert found["POST token"].get_total_count() == 1
    assert abs(found["POST authorize"].get_max_value() - 7_250) <= 7  # µs, 3 digits
