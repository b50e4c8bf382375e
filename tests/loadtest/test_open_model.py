"""The open model: the schedule in-process (fake clock), then real Locust runs at a rate.

No assertion depends on timing luck: counts come from the schedule itself (a constant
schedule over the run time intends exactly :func:`planned_count` starts), and the pausing
sandbox's bounds follow from its period (25 % of every 2 s paused for 500 ms, so more than
1 % of evenly spaced intended starts wait at least half a pause).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from authzkit.loadtest.record.histograms import AGGREGATED, FLUSH_EVERY, encode, new_histogram
from authzkit.loadtest.record.schedule import (
    SCHEDULE_KEYS,
    ScheduleStats,
    arrival_offsets,
    planned_count,
    process_rate,
    run_schedule,
)
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import free_port
from authzkit.wire.errors import ConfigError

from support.loadtest import AUTHORIZE_FILE, LocustRun, assert_timeline_counts, locust

# -- the schedule, in-process -------------------------------------------------------------------


def test_constant_arrivals_are_evenly_spaced_and_counted_exactly() -> None:
    offsets = list(arrival_offsets(50, "constant", seconds=3))
    assert len(offsets) == 150 == planned_count(50, 3)
    assert offsets[:3] == [0.0, 0.02, 0.04]
    assert offsets[-1] == pytest.approx(2.98)
    assert planned_count(3, 1.5) == 5  # 0, 1/3, 2/3, 1, 4/3


def test_poisson_arrivals_are_reproducible_and_near_the_rate() -> None:
    first = list(arrival_offsets(200, "poisson", seconds=100, seed=7))
    assert first == list(arrival_offsets(200, "poisson", seconds=100, seed=7))
    assert first != list(arrival_offsets(200, "poisson", seconds=100, seed=8))
    assert all(a < b for a, b in itertools.pairwise(first))
    # 20 000 expected; a Poisson count's standard deviation is sqrt(20 000) ~ 141
    assert abs(len(first) - 20_000) < 1_000


def test_bad_rates_and_arrivals_name_the_option() -> None:
    with pytest.raises(ConfigError, match="--rate must be a positive"):
        process_rate(0, 1)
    with pytest.raises(ConfigError, match="--arrivals must be one of constant, poisson"):
        next(arrival_offsets(10, "bursty"))
    assert process_rate(300, 3) == 100


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakePool:
    """Calls start at once and stay in flight until the test ends ``finish_after`` of them
    (a stalled service); waiting for room ends the oldest call after ``stall`` seconds."""

    def __init__(self, clock: FakeClock, size: int, stall: float) -> None:
        self.clock, self.size, self.stall = clock, size, stall
        self.running: list[Callable[[], None]] = []

    def full(self) -> bool:
        return len(self.running) >= self.size

    def wait_available(self) -> None:
        self.clock.sleep(self.stall)
        self.running.pop(0)()

    def spawn(self, call: Callable[[float], Any], intended_at: float) -> None:
        self.running.append(call(intended_at))


def test_lag_late_starts_and_the_cap_are_counted() -> None:
    clock = FakeClock()
    stats = ScheduleStats()
    pool = FakePool(clock, size=5, stall=0.5)

    def call(intended_at: float) -> Callable[[], None]:
        stats.started(intended_at, clock())
        return stats.finished

    # 20 starts at 100/s: 5 fit, then each start waits 0.5 s for the oldest call to end
    run_schedule(
        arrival_offsets(100, seconds=0.2),
        call,
        pool=pool,
        stats=stats,
        clock=clock,
        sleep=clock.sleep,
    )
    found = stats.summary(100.0)
    assert set(SCHEDULE_KEYS) <= set(found)
    assert found["intended"] == found["sent"] == 20
    assert found["cap_reached"] == 15
    assert found["late"] == 15  # every capped start went out late
    assert found["peak_in_flight"] == 5
    assert found["lag_p99_us"] >= 7_000_000  # the last: sent at 0.05 + 15 * 0.5 s, meant for 0.19 s


class MillisecondTimer(FakeClock):
    """gevent's timer: a sleep wakes at the next whole millisecond after its end, never
    sooner; the sleeps are recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now = math.floor((self.now + seconds) * 1000 + 1) / 1000


def test_one_wake_starts_every_due_start_in_a_batch() -> None:
    clock = MillisecondTimer()
    stats = ScheduleStats()
    pool = FakePool(clock, size=1000, stall=0.0)
    sent: list[tuple[float, float]] = []

    def call(intended_at: float) -> Callable[[], None]:
        sent.append((intended_at, clock()))
        stats.started(intended_at, clock())
        return stats.finished

    # 4000/s = a start every 0.25 ms, finer than the 1 ms timer: 400 starts in 0.1 s
    run_schedule(
        arrival_offsets(4000, seconds=0.1),
        call,
        pool=pool,
        stats=stats,
        clock=clock,
        sleep=clock.sleep,
    )
    found = stats.summary(4000.0)
    assert found["intended"] == found["sent"] == len(sent) == planned_count(4000, 0.1) == 400
    assert all(sent_at >= intended_at for intended_at, sent_at in sent)  # never early
    assert max(sent_at - intended_at for intended_at, sent_at in sent) <= 0.001 + 1e-9
    assert found["late"] == 0 and found["cap_reached"] == 0
    # one sleep per timer tick (~100), not one per start (400); each the exact time left
    assert len(clock.sleeps) <= 101
    assert all(0 < seconds <= 0.00025 + 1e-9 for seconds in clock.sleeps)
    assert any(seconds != round(seconds, 3) for seconds in clock.sleeps)  # not whole ms


def test_worker_stats_merge_like_histograms() -> None:
    workers = [ScheduleStats(), ScheduleStats()]
    for number, worker in enumerate(workers):
        for start in range(10):
            worker.due()
            worker.started(start, start + 0.003 * number)  # worker 1 is 3 ms late each time
            worker.finished()
    master = ScheduleStats()
    for worker in workers:
        master.add(worker.drain())
        assert worker.drain()["sent"] == 0  # a report carries what was new since the last
    found = master.summary(20.0)
    assert master.active
    assert (found["intended"], found["sent"], found["late"]) == (20, 20, 10)
    assert found["lag_p99_us"] == pytest.approx(3000, rel=0.001)


def test_the_schedule_says_when_it_began_on_the_wall_clock() -> None:
    """``began_at`` is the origin's wall-clock time (a server's stamps line up with the
    intended starts); a worker's report carries it and the master keeps the earliest."""
    before = time.time()
    stats = ScheduleStats()
    run_schedule(
        arrival_offsets(1000, seconds=0.005),
        lambda intended_at: stats.finished,
        pool=FakePool(FakeClock(), size=10, stall=0.0),
        stats=stats,
        clock=time.perf_counter,
        sleep=time.sleep,
    )
    began = stats.summary(1000.0)["began_at"]
    assert before <= began <= time.time()
    late = ScheduleStats()
    late.began(time.perf_counter() + 60)  # a worker whose schedule began a minute later
    master = ScheduleStats()
    for worker in (late, stats):
        master.add(worker.drain())
        assert worker.drain()["began_at"] is not None  # kept across reports
    assert master.summary(1000.0)["began_at"] == began


def test_lags_are_buffered_and_every_one_reaches_the_histogram() -> None:
    stats, expected = ScheduleStats(), new_histogram()
    lags = [0.0, 0.0000004, 0.0015, 0.0031, 0.25, 61.0] * (FLUSH_EVERY // 3)
    for number, lag in enumerate(lags):
        stats.started(number, number + lag)
        expected.record_value(min(max(round(lag * 1_000_000), 1), 60_000_000))
    assert len(stats._lags) < len(lags)  # full buffers went into the histogram on the way
    assert encode(stats.lag) == encode(expected)
    assert stats.summary(1.0)["late"] == sum(lag > 0.002 for lag in lags)


# -- real Locust runs ------------------------------------------------------------------------------


def open_run(
    process: SandboxProcess, out: Path, *extra: str, run_time: int = 3, users: int = 1
) -> LocustRun:
    return locust(
        AUTHORIZE_FILE,
        ["OpenAuthorizeUser"],
        host=process.base_url,
        out=out,
        users=users,
        run_time=f"{run_time}s",
        extra=list(extra),
    )


def assert_consistent(run: LocustRun) -> dict[str, Any]:
    """The open-model fields are there and agree: every sent start is one row sample."""
    schedule = run.summary["schedule"]
    assert set(SCHEDULE_KEYS) <= set(schedule)
    assert schedule["sent"] <= schedule["intended"]
    latency, service = run.summary["latency_us"], run.summary["service_time_us"]
    assert set(latency) == set(service)
    for row in latency:
        assert latency[row]["count"] == service[row]["count"], row
    completed = latency["POST authorize"]["count"]
    assert completed == schedule["sent"]
    assert run.row("POST", "authorize")["num_requests"] == completed
    assert latency[AGGREGATED]["count"] == sum(r["num_requests"] for r in run.rows.values())
    assert_timeline_counts(run)
    return schedule


@pytest.mark.slow
def test_open_run_starts_exactly_the_planned_requests(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    before = time.time()
    run = open_run(sandbox_process, tmp_path, "--rate", "40", "--arrivals-seed", "1")
    after = time.time()
    run.assert_clean()
    schedule = assert_consistent(run)
    assert before < schedule["began_at"] < after - 3  # its 3 s of starts ended in the run
    assert schedule["rate"] == 40
    assert schedule["intended"] == planned_count(40, 3) == 120
    assert schedule["sent"] == schedule["intended"]
    assert schedule["cap_reached"] == 0
    assert (tmp_path / "service_histograms.json").exists()


@pytest.mark.slow
def test_closed_runs_have_no_open_model_fields(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    run = locust(
        AUTHORIZE_FILE,
        ["FastAuthorizeUser"],
        host=sandbox_process.base_url,
        out=tmp_path,
        users=2,
        run_time="2s",
    )
    run.assert_clean()
    assert "schedule" not in run.summary and "service_time_us" not in run.summary


@pytest.fixture(scope="module")
def pausing_process() -> Any:
    """A sandbox that holds every answer for the first 500 ms of every 2 s."""
    with SandboxProcess(pause_every=2, pause_ms=500) as sandbox:
        yield sandbox


@pytest.mark.slow
def test_response_time_from_the_intended_start_sees_the_pauses(
    pausing_process: SandboxProcess, tmp_path: Path
) -> None:
    run = open_run(pausing_process, tmp_path, "--rate", "100", run_time=4)
    assert run.code == 0, run.output[-3000:]
    schedule = assert_consistent(run)
    assert schedule["intended"] == planned_count(100, 4)
    latency = run.summary["latency_us"]["POST authorize"]
    service = run.summary["service_time_us"]["POST authorize"]
    # 25 % of starts fall in a pause; the top 1 % of all waited at least half a pause
    assert latency["p99"] >= 300_000, latency
    assert service["p50"] < 100_000, service  # 75 % were sent outside a pause
    # Second by second: held answers go out when a pause ends, so the second holding a
    # pause's end has a p99 near the pause; pause ends are 2 s apart, so of the 4 s run's
    # full seconds at least one holds none and reads like the unpaused service.
    seconds = [r for r in run.timeline["records"] if r["row"] == AGGREGATED]
    assert max(r["p99"] for r in seconds) >= 300_000, seconds
    assert min(r["p99"] for r in seconds if r["count"] >= 50) < 100_000, seconds


@pytest.mark.slow
def test_in_flight_cap_is_respected_and_counted(
    pausing_process: SandboxProcess, tmp_path: Path
) -> None:
    run = open_run(pausing_process, tmp_path, "--rate", "100", "--max-in-flight", "5", run_time=4)
    assert run.code == 0, run.output[-3000:]
    schedule = assert_consistent(run)
    assert schedule["cap_reached"] > 0
    assert 1 <= schedule["peak_in_flight"] <= 5
    assert schedule["late"] > 0
    latency = run.summary["latency_us"]["POST authorize"]
    service = run.summary["service_time_us"]["POST authorize"]
    # Waiting for the cap counts in the response time, never in the service time: the
    # 45 starts of each pause that wait for room are over a fifth of all, so p90 shows it
    # (p99 is the 5 calls held in the pause, sent on time: the same in both, to the µs).
    assert latency["p90"] > service["p90"]


# The open user of a worker that starts after its master's run time is over, as a busy
# machine's workers did (spawned late, their first token slow to come).
LATE_START_S = 2.5
LATE_STARTING_USER = f"""
import gevent

from authzkit.loadtest.record.users import OpenAuthorizeUser


class LateOpenAuthorizeUser(OpenAuthorizeUser):
    def on_start(self):
        gevent.sleep({LATE_START_S})
        super().on_start()
"""


@pytest.mark.slow
def test_two_worker_processes_share_the_rate_and_merge_exactly(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    """--processes 2: each worker keeps half the rate; the master's schedule block, latency
    and service-time histograms are the exact sums of the two workers'. Both workers start
    their schedule after the master's 2 s are over, the worst a busy machine does: each
    still runs its whole schedule (the stop waits for it to begin, then lets it end) and
    the master hears every report before it quits."""
    locustfile = tmp_path / "late_start.py"
    locustfile.write_text(LATE_STARTING_USER)
    port = free_port()
    run = locust(
        locustfile,
        ["LateOpenAuthorizeUser"],
        host=sandbox_process.base_url,
        out=tmp_path / "out",
        users=2,
        run_time="2s",
        extra=[
            "--rate",
            "40",
            "--processes",
            "2",
            "--master-bind-host",
            "127.0.0.1",
            "--master-bind-port",
            str(port),
            "--master-port",
            str(port),
        ],
    )
    run.assert_clean()
    workers = run.summary["workers"]
    assert (workers["expected"], workers["took_part"]) == (2, 2), workers
    assert run.summary["token_provider"]["processes"] == 2
    schedule = assert_consistent(run)  # every start sent was answered and reported
    # Each worker plans 20/s over the master's 2 s: 40 starts, 80 in all (a worker that took
    # the whole rate would plan 80 alone).
    assert schedule["intended"] == 2 * planned_count(20, 2) == 80
    assert schedule["sent"] == schedule["intended"] and schedule["seconds"] == 2
    assert isinstance(schedule["began_at"], float)  # the earlier worker's, carried over
