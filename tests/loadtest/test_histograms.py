"""Microsecond HdrHistograms per Locust row: the module in-process, then real Locust runs.

The unit tests check what the summary reports against values known in advance (within the
0.1 % that 3 significant digits promise); the runs check that every request Locust counted
reached the histograms, in one process and merged from two worker processes.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram

from authzkit.loadtest.read.tables import load_run
from authzkit.loadtest.record.histograms import (
    AGGREGATED,
    FLUSH_EVERY,
    HIGHEST_US,
    EncodedHistograms,
    LatencyRecorder,
    decode,
    encode,
    latency_summary,
    merge,
    new_histogram,
    percentiles,
    record_millis,
    to_microseconds,
    values_at,
)
from authzkit.loadtest.record.summary import HISTOGRAM_FILE, build_summary, write_run_files
from authzkit.loadtest.record.timeline import new_second_histogram
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import free_port

from support.loadtest import (
    AUTHORIZE_FILE,
    LocustRun,
    assert_every_call_heard,
    assert_timeline_counts,
    authorize_calls,
    locust,
)

# 1 … 20 000 µs, each once: nearest-rank percentiles are exactly these.
VALUES = range(1, 20_001)
EXPECTED = {
    "count": 20_000,
    "p50": 10_000,
    "p90": 18_000,
    "p99": 19_800,
    "p99.9": 19_980,
    "max": 20_000,
}


def assert_close(found: dict[str, int], expected: dict[str, int]) -> None:
    """Counts equal, values within HdrHistogram's 0.1 % (3 significant digits)."""
    assert found.keys() == expected.keys()
    assert found["count"] == expected["count"]
    for key in expected.keys() - {"count"}:
        assert abs(found[key] - expected[key]) <= expected[key] * 0.001, (key, found[key])


def halves() -> tuple[HdrHistogram, HdrHistogram]:
    """The known values split between two histograms (odd and even), like two workers."""
    odd, even = new_histogram(), new_histogram()
    for value in VALUES:
        (odd if value % 2 else even).record_value(value)
    return odd, even


# -- the module ---------------------------------------------------------------------------------


def test_locust_milliseconds_become_whole_microseconds_within_range() -> None:
    assert to_microseconds(1.2346) == 1235
    assert to_microseconds(0.0) == 1  # below the lowest trackable value: still counted
    assert to_microseconds(3_600_000.0) == HIGHEST_US  # an hour: counted as the 60 s ceiling


def test_merge_of_two_histograms_sums_counts_and_keeps_percentiles() -> None:
    odd, even = halves()
    assert percentiles(odd)["count"] == percentiles(even)["count"] == 10_000
    assert_close(percentiles(merge([odd, even])), EXPECTED)


def test_empty_histogram_reports_zeros() -> None:
    assert percentiles(new_histogram()) == dict.fromkeys(EXPECTED, 0)


@pytest.mark.parametrize("make", [new_histogram, new_second_histogram])
def test_percentiles_read_in_numpy_are_hdrhs_own(make: Any) -> None:
    """Every percentile the package reads comes from :func:`values_at`: hdrh's answers."""
    draw = random.Random(7)
    percents = [0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0]
    empty = make()
    assert values_at(empty, percents) == {p: empty.get_value_at_percentile(p) for p in percents}
    for size in (1, 3, 1000):
        histogram = make()
        for _ in range(size):
            histogram.record_value(int(draw.lognormvariate(8, 1.5)) + 1)
        expected = {p: histogram.get_value_at_percentile(p) for p in percents}
        assert values_at(histogram, percents) == expected


def test_encoding_round_trip_and_a_clear_error_for_garbage() -> None:
    odd, _ = halves()
    text = encode(odd)
    assert text.startswith("HISTF")  # base64 of HdrHistogram's compressed encoding
    assert percentiles(decode(text)) == percentiles(odd)
    with pytest.raises(ValueError, match="not an HdrHistogram compressed encoding"):
        decode("not a histogram")


@pytest.mark.parametrize("make", [new_histogram, new_second_histogram], ids=["3 sf", "2 sf"])
def test_bulk_recording_equals_one_record_value_per_request(make: Any) -> None:
    # every bucket size from 1 µs to 60 s, both ends of the range, out-of-range values and
    # the same value many times: the encodings (every count) and the extremes must match
    generator = random.Random(26)
    millis = [generator.lognormvariate(0.5, 2.5) for _ in range(30_000)]
    millis += [0.0, 0.0004, 0.0005, 0.0015, 2.0475, 2.0485, 99.9, 1e9, 60_000.0, -1.0] * 3
    one_by_one, bulk = make(), make()
    for value in millis:
        one_by_one.record_value(to_microseconds(value))
    record_millis(bulk, millis[:7_000])
    record_millis(bulk, millis[7_000:])  # a second batch adds to the first
    record_millis(bulk, [])
    assert encode(bulk) == encode(one_by_one)
    assert percentiles(bulk) == percentiles(one_by_one)
    assert (bulk.get_total_count(), bulk.get_min_value(), bulk.get_max_value()) == (
        one_by_one.get_total_count(),
        one_by_one.get_min_value(),
        one_by_one.get_max_value(),
    )


def test_buffered_times_are_in_every_read_and_flushed_when_a_row_fills() -> None:
    recorder = LatencyRecorder()
    recorder.record("POST", "authorize", 1.5)
    assert recorder.histograms["POST authorize"].get_total_count() == 1  # read → flushed
    for _ in range(FLUSH_EVERY + 1):
        recorder.record("POST", "authorize", 2.5)
    assert recorder._pending[("POST", "authorize")] == [2.5]  # a full buffer went in
    assert recorder.histograms["POST authorize"].get_total_count() == FLUSH_EVERY + 2
    recorder.record("POST", "authorize", 3.5)
    recorder.reset()  # buffered times are forgotten too
    assert recorder.drain() == {}


def test_workers_drain_deltas_and_the_master_merges_them_exactly() -> None:
    workers = [LatencyRecorder(), LatencyRecorder()]
    for value in VALUES:
        workers[value % 2].record("POST", "authorize", value / 1000)  # Locust hands ms
    workers[0].record("POST", "token", 4.5)
    workers[1].record("POST", "token", None)  # Locust allows a request without a time
    master = LatencyRecorder()
    for worker in workers:
        master.add_encoded(worker.drain())
        assert worker.drain() == {}  # a report carries what was new since the last one
    summary = latency_summary(master.histograms)
    assert list(summary) == ["POST authorize", "POST token", AGGREGATED]
    assert_close(summary["POST authorize"], EXPECTED)
    # 4.5 ms is 4500 µs (HdrHistogram reports its bucket's highest equivalent value)
    assert_close(
        summary["POST token"], {"count": 1, **dict.fromkeys(EXPECTED.keys() - {"count"}, 4500)}
    )
    assert summary[AGGREGATED]["count"] == 20_001
    # the next report adds to what the master holds
    workers[0].record("POST", "token", 4.5)
    master.add_encoded(workers[0].drain())
    assert latency_summary(master.histograms)["POST token"]["count"] == 2


def test_summary_and_histogram_file_read_back_by_load_run(tmp_path: Path) -> None:
    odd, even = halves()
    histograms = {"POST authorize": odd, "POST token": even}
    summary = build_summary(
        requests=20_000,
        failures=0,
        p95_ms=19.0,
        errors=[],
        counters=[{"token_calls": 1, "refreshes": 0}],
        max_p95_ms=None,
        max_failure_ratio=None,
        histograms=histograms,
    )
    assert summary["latency_us"][AGGREGATED]["count"] == 20_000
    assert_close(summary["latency_us"][AGGREGATED], EXPECTED)
    (tmp_path / "stats.json").write_text("[]")
    written = write_run_files(tmp_path / "summary.json", summary, histograms)
    assert written == tmp_path / HISTOGRAM_FILE
    stored = json.loads(written.read_text())
    assert sorted(stored) == sorted(["POST authorize", "POST token", AGGREGATED])

    run = load_run(tmp_path)
    assert run.summary["latency_us"] == summary["latency_us"]
    assert isinstance(run.histograms, EncodedHistograms)
    assert sorted(run.histograms) == sorted(stored)
    assert_close(percentiles(run.histograms[AGGREGATED]), EXPECTED)
    with pytest.raises(KeyError, match="no histogram for row 'GET nothing'"):
        run.histograms["GET nothing"]


def _judged(
    histograms: dict[str, Any], *, locust_p95_ms: float, max_p95_ms: float
) -> dict[str, Any]:
    summary = build_summary(
        requests=200,
        failures=0,
        p95_ms=locust_p95_ms,
        errors=[],
        counters=[],
        max_p95_ms=max_p95_ms,
        max_failure_ratio=None,
        histograms=histograms,
    )
    thresholds: dict[str, Any] = summary["thresholds"]
    return thresholds


def test_the_p95_judged_comes_from_the_microsecond_histograms() -> None:
    """A service answering in 100-299 µs: Locust's whole-millisecond p95 reads 0, the
    histograms' 0.289 ms, and --max-p95-ms 0.2 fails as it should."""
    answers = new_histogram()
    for micros in range(100, 300):
        answers.record_value(micros)
    broken = _judged({"POST authorize": answers}, locust_p95_ms=0.0, max_p95_ms=0.2)
    assert broken["p95_ms"] == 0.289
    assert broken["problems"] == ["Aggregated p95 0.289 ms > --max-p95-ms 0.2"]
    kept = _judged({"POST authorize": answers}, locust_p95_ms=0.0, max_p95_ms=0.5)
    assert kept["passed"] and kept["problems"] == []
    # without histograms (a master that gave up before any report), Locust's p95 is judged
    fallback = _judged({}, locust_p95_ms=1500.0, max_p95_ms=1000)
    assert fallback["problems"] == ["Aggregated p95 1,500 ms > --max-p95-ms 1000"]


def test_without_histograms_the_summary_says_so_and_old_runs_still_load(tmp_path: Path) -> None:
    summary = build_summary(
        requests=0,
        failures=0,
        p95_ms=0.0,
        errors=[],
        counters=[],
        max_p95_ms=None,
        max_failure_ratio=None,
    )
    assert summary["latency_us"] == {}
    (tmp_path / "stats.json").write_text("[]")  # a run recorded before histograms existed
    assert dict(load_run(tmp_path).histograms) == {}


# -- real Locust runs -----------------------------------------------------------------------------


def assert_rows_match_locust(run: LocustRun) -> None:
    """Every Locust row has a histogram row counting exactly its requests, in microseconds
    (its max agrees with Locust's float-millisecond max), and ``Aggregated`` sums them."""
    latency = run.summary["latency_us"]
    assert set(latency) == {f"{kind} {name}" for kind, name in run.rows} | {AGGREGATED}
    for (kind, name), row in run.rows.items():
        found = latency[f"{kind} {name}"]
        assert found["count"] == row["num_requests"], (kind, name)
        assert found["p50"] <= found["p90"] <= found["p99"] <= found["p99.9"] <= found["max"]
        expected_max = row["max_response_time"] * 1000
        assert abs(found["max"] - expected_max) <= expected_max * 0.001 + 1, (kind, name)
    assert latency[AGGREGATED]["count"] == sum(r["num_requests"] for r in run.rows.values())
    assert_timeline_counts(run)


@pytest.mark.slow
def test_locust_run_has_a_histogram_per_row(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    calls_before = authorize_calls(sandbox_process)
    run = locust(
        AUTHORIZE_FILE,
        ["AuthorizeUser", "FastChallengeUser"],
        host=sandbox_process.base_url,
        out=tmp_path,
        run_time="2s",
    )
    run.assert_clean()
    assert_every_call_heard(run, sandbox_process, calls_before)
    assert run.row("FLOW", "challenge round trip")["num_requests"] > 0
    assert_rows_match_locust(run)
    stored = load_run(tmp_path).histograms
    assert set(stored) == set(run.summary["latency_us"])
    for row, found in run.summary["latency_us"].items():
        assert percentiles(stored[row]) == found


@pytest.mark.slow
def test_two_worker_processes_merge_exactly(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    port = free_port()
    calls_before = authorize_calls(sandbox_process)
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=sandbox_process.base_url,
        out=tmp_path,
        users=4,
        run_time="5s",
        extra=[
            "--processes",
            "2",
            "--master-bind-host",
            "127.0.0.1",
            "--master-bind-port",
            str(port),
            "--master-port",
            str(port),
            "--loglevel",
            "DEBUG",
        ],
    )
    run.assert_clean()
    assert run.summary["token_provider"]["processes"] == 2  # two workers reported
    assert_every_call_heard(run, sandbox_process, calls_before)
    assert_rows_match_locust(run)
    # The histograms travelled in Locust's custom messages, from both workers.
    senders = set(
        re.findall(r"Received authzkit_report message from worker \S+ \(index (\d+)\)", run.output)
    )
    assert senders == {"0", "1"}, run.output[-3000:]
