"""The drift verdict in-process, on given per-second histograms (issue 35, item 1): windows of
merged seconds, the ratio of their p99, the failure drift, the slope, and what is refused."""

from __future__ import annotations

from authzkit.loadtest.progress import progress_line
from authzkit.loadtest.record.drift import (
    default_warm_up,
    default_window,
    judge,
    p99_slope,
    windows_fit,
)
from authzkit.loadtest.record.summary import build_summary
from authzkit.loadtest.record.timeline import SecondRecorder, TimelineMerger

from support.endurance import run_of, second_of

T0 = 1_800_000_000.0


def test_a_service_that_slows_as_it_runs_fails_naming_drift_both_windows_and_their_p99() -> None:
    seconds = run_of(60, lambda s: 1_000 + 100 * s)  # 1 ms, 100 µs slower every second
    found = judge(seconds, max_drift=2.0, window_s=10, warm_up_s=5)
    assert found["judged"] and found["checked"] and not found["passed"]
    assert (found["first"]["from_s"], found["first"]["to_s"]) == (5, 15)
    assert (found["last"]["from_s"], found["last"]["to_s"]) == (50, 60)  # second 60 left out
    assert abs(found["first"]["p99"] - 2_400) <= 25 and abs(found["last"]["p99"] - 6_900) <= 70
    assert 2.8 < found["ratio"] < 2.9
    [problem] = found["problems"]
    assert problem.startswith("drift: p99 grew 2.8")
    for piece in ("--max-drift 2", "s 5-15", "s 50-60", "2.42 ms", "6.91 ms"):
        assert piece in problem
    assert 5_500 < found["slope"]["p99_us_per_min"] < 6_500 and found["slope"]["r2"] > 0.99


def test_a_steady_service_passes_and_a_run_without_limits_is_reported_not_judged() -> None:
    seconds = run_of(60, lambda s: 1_000 + (37 * s) % 50)  # jitter, no trend
    passed = judge(seconds, max_drift=1.2)
    assert passed["checked"] and passed["passed"] and passed["problems"] == []
    assert 0.95 < passed["ratio"] < 1.06
    unchecked = judge(seconds)
    assert not unchecked["checked"] and unchecked["passed"] and unchecked["ratio"] is not None


def test_windows_come_from_merged_histograms_never_averaged_percentiles() -> None:
    """Second 1: 1,000 calls at 100 µs; second 2: 10 at 10 ms. Merged, the window's p99 is
    100 µs (the slow ones are 1 %); the mean of the seconds' p99s would read 5 ms."""
    seconds = {0: second_of((1, 100)), 1: second_of((1_000, 100)), 2: second_of((10, 10_000))}
    seconds.update({s: second_of((100, 100)) for s in range(3, 8)})
    found = judge(seconds, window_s=2, warm_up_s=1)
    assert found["first"]["count"] == 1_010 and found["first"]["p99"] == 100
    assert found["first"]["p99.9"] >= 9_900


def test_the_failure_ratio_drifts_in_percentage_points() -> None:
    seconds = run_of(20, lambda s: 1_000)
    failures = {s: 5 for s in range(15, 20)}  # 5 % of the last window's calls fail
    found = judge(seconds, failures, max_failure_drift=2, window_s=5, warm_up_s=1)
    assert found["first"]["failure_ratio"] == 0 and found["last"]["failure_ratio"] == 0.05
    assert found["failure_drift_pp"] == 5.0 and not found["passed"]
    assert found["problems"][0].startswith("failure drift: +5.00 percentage points")
    assert judge(seconds, failures, max_failure_drift=5, window_s=5, warm_up_s=1)["passed"]


def test_a_run_too_short_for_two_windows_is_not_judged_and_fails_when_a_limit_was_given() -> None:
    seconds = run_of(6, lambda s: 1_000)
    found = judge(seconds, max_drift=1.5, window_s=5, warm_up_s=1)
    assert not found["judged"] and not found["passed"]
    assert "too few for two windows of 5 s" in found["problems"][0]
    assert judge(seconds, window_s=5)["passed"]  # nothing asked: nothing failed


def test_a_window_in_which_nothing_completed_fails_a_limit_given() -> None:
    seconds = {s: h for s, h in run_of(20, lambda s: 1_000).items() if s < 12}
    seconds[20] = run_of(0, lambda s: 1_000)[0]  # the partial last second, after a stall
    found = judge(seconds, max_drift=1.5, window_s=5, warm_up_s=1)
    assert found["last"]["count"] == 0 and found["ratio"] is None and not found["passed"]
    [problem] = found["problems"]
    assert problem == "drift not judged: no request completed in the last window s 15-20"


def test_default_windows_a_sixth_of_the_run_at_least_10_s_when_they_fit() -> None:
    assert (default_warm_up(600), default_window(600, 60)) == (60, 100)
    assert (default_warm_up(60), default_window(60, 6)) == (6, 10)
    assert default_window(8, 1) == 3  # a short run: half of what follows the warm-up
    assert windows_fit(60, None, None) is None
    why = windows_fit(10, 5, None)
    assert why is not None and "too few for two windows of 5 s" in why


def test_the_slope_fits_the_windows_p99_and_needs_three_windows() -> None:
    found = judge(run_of(60, lambda s: 1_000 + (500 if s % 2 else 0)), window_s=10, warm_up_s=5)
    assert found["slope"]["points"] == 6 and abs(found["slope"]["p99_us_per_min"]) < 100
    assert p99_slope(found["windows"][:2]) is None


def test_failed_seconds_merge_across_processes_and_the_verdict_joins_the_thresholds() -> None:
    one, two, merger = SecondRecorder(), SecondRecorder(), TimelineMerger()
    for s in range(12):
        for i in range(10):
            one.record("POST", "authorize", 1.0 + s, T0 + s + i / 20, failed=s >= 8 and i == 0)
            two.record("POST", "authorize", 1.0 + s, T0 + s + i / 20)
    for recorder in (one, two):
        merger.add(recorder.drain(), recorder.drain_failures())
    seconds, failed = merger.seconds()
    assert sorted(seconds) == list(range(12)) and seconds[3].get_total_count() == 20
    assert failed == {8: 1, 9: 1, 10: 1, 11: 1}
    drift = judge(seconds, failed, max_drift=1.5, window_s=3, warm_up_s=1)
    assert drift["last"]["failures"] == 3 and drift["ratio"] > 1.5
    summary = build_summary(
        requests=240,
        failures=4,
        p95_ms=1.0,
        errors=[],
        counters=[],
        max_p95_ms=None,
        max_failure_ratio=None,
        drift=drift,
    )
    assert summary["drift"] is drift and summary["thresholds"]["checked"]
    assert not summary["thresholds"]["passed"]
    assert summary["thresholds"]["problems"] == drift["problems"]


def test_the_live_line_shows_the_p99_of_the_last_whole_seconds_merged() -> None:
    recorder, merger = SecondRecorder(), TimelineMerger()
    for s, millis in ((0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0)):
        for i in range(50):
            recorder.record("POST", "authorize", millis, T0 + s + i / 100)
    merger.add(recorder.drain(), recorder.drain_failures())
    recent = merger.recent(2)  # seconds 1 and 2: second 3, still filling, is left out
    assert recent["recent_count"] == 100 and abs(recent["recent_p99_us"] - 4_000) <= 40
    assert TimelineMerger().recent(2) == {"recent_count": 0, "recent_p99_us": 0}
    totals = {"requests": 90, "failures": 0, "rps": 45.0, "p95_us": 430, "recent_p99_us": 4_000}
    assert progress_line(4.0, 30.0, totals).endswith("p95 430 µs  last 2s p99 4.00 ms")
