"""The open model's wait for a start: blocked on a precise timer until just before the
start, then the loop runs until it is due (at most 1 % of the wait); never back before it.
Checked with a given clock (what is called, with which times), and a real kernel timerfd
for what it promises."""

from __future__ import annotations

import ast
import select
import subprocess
import sys
import time

import pytest

from authzkit.loadtest.record.pacing import (
    FALLBACK_SPIN_S,
    MIN_SPIN_S,
    SPIN_S,
    SPIN_SHARE,
    StartWaiter,
    Timerfd,
    precise_timer,
    spin_for,
)


class Clock:
    """A clock that moves only when the waiter waits, and says how it was asked to."""

    def __init__(self) -> None:
        self.now = 100.0
        self.calls: list[tuple[str, object]] = []  # a time, or pytest.approx of one
        self.armed: float | None = None
        self.slack = 30e-6  # the kernel's timer slack: how late the timer wakes

    def __call__(self) -> float:
        return self.now

    def idle(self) -> None:
        self.calls.append(("idle", self.now))
        self.now += 20e-6  # one turn of the loop

    def sleep(self, seconds: float) -> None:
        self.calls.append(("sleep", seconds))
        self.now += seconds + 0.0009  # libev's rounding up to the next millisecond

    def wait_read(self, fd: int) -> None:
        assert self.armed is not None
        self.calls.append(("wait_read", self.armed))
        self.now = self.armed + self.slack


class FakeTimer:
    fd = 7

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.cleared = 0

    def arm(self, at: float) -> None:
        self.clock.armed = at

    def clear(self) -> None:
        self.clock.armed = None
        self.cleared += 1

    def close(self) -> None:
        pass


def waiter(clock: Clock, timer: FakeTimer | None) -> StartWaiter:
    return StartWaiter(
        timer,  # type: ignore[arg-type]
        clock=clock,
        wait_read=clock.wait_read,
        sleep=clock.sleep,
        idle=clock.idle,
    )


def test_a_start_blocks_on_the_timer_until_just_before_then_runs_the_loop() -> None:
    clock = Clock()
    due = clock.now + 0.0123
    timer = FakeTimer(clock)
    waiter(clock, timer)(0.0123)
    assert clock.calls[0] == ("wait_read", pytest.approx(due - 123e-6))  # 1 % of the wait
    assert {kind for kind, _ in clock.calls[1:]} == {"idle"}
    assert timer.cleared == 1  # read before the loop runs: its expiry wakes no turn
    assert due <= clock.now < due + 20e-6  # never before its time, one loop turn after at most


def test_the_spin_is_a_small_share_of_a_short_wait() -> None:
    """Between starts 2 ms apart the loop runs for 20 µs (1 %), not the whole 300 µs: the
    spin's CPU stays a hundredth of a core at any rate; at 2,000/s it is 5 µs."""
    assert spin_for(0.050) == SPIN_S
    assert spin_for(0.002) == pytest.approx(SPIN_SHARE * 0.002) == pytest.approx(20e-6)
    assert spin_for(0.0005) == pytest.approx(5e-6)
    clock = Clock()
    due = clock.now + 0.002
    waiter(clock, FakeTimer(clock))(0.002)
    assert clock.calls[0] == ("wait_read", pytest.approx(due - 20e-6))
    assert due <= clock.now < due + 20e-6


def test_a_wake_at_the_start_runs_no_loop_and_leaves_the_timer_for_the_next_arm() -> None:
    """A timer that wakes 30 µs late for a start 500 µs away (armed 5 µs early): back at
    once, past the start, with no turn of the loop and no read of the timer (arming it
    again clears it): the wait a start at 2,000/s pays is the block alone."""
    clock = Clock()
    timer = FakeTimer(clock)
    wait = waiter(clock, timer)
    for _ in range(50):
        due = clock.now + 0.0005
        before = len(clock.calls)
        wait(0.0005)
        assert clock.now >= due
        assert [kind for kind, _ in clock.calls[before:]] == ["wait_read"]
    assert timer.cleared == 0


def test_the_timer_is_armed_as_early_as_it_wakes_late_so_the_loop_barely_runs() -> None:
    """A timer that wakes 30 µs after its time: the first wait is armed the whole spin
    early (100 µs before a start 10 ms away), later ones about 30 µs early, and the start
    is met with (almost) no turn of the loop, never before its time."""
    clock = Clock()
    wait = waiter(clock, FakeTimer(clock))
    for _ in range(300):
        due = clock.now + 0.010
        before = len(clock.calls)
        wait(0.010)
        assert clock.now >= due
    kind, armed = clock.calls[before]
    assert kind == "wait_read"
    assert armed == pytest.approx(due - 30e-6, abs=2e-6)
    assert len(clock.calls) - before <= 2  # the wait, and at most one turn of the loop


def test_one_slow_wake_arms_the_next_waits_earlier() -> None:
    """After a wake 200 µs late the timer is armed well before its usual 30 µs again, so
    the next slow wakes are still met on time; quick wakes bring it back only slowly."""
    clock = Clock()
    wait = waiter(clock, FakeTimer(clock))
    for _ in range(300):
        wait(0.004)
    settled = wait.delay
    assert settled == pytest.approx(30e-6, abs=2e-6)
    clock.slack = 200e-6
    wait(0.004)
    clock.slack = 30e-6
    assert wait.delay > 100e-6
    wait(0.004)
    assert wait.delay > 90e-6


def test_without_a_timerfd_the_millisecond_timer_stops_a_millisecond_early() -> None:
    clock = Clock()
    due = clock.now + 0.0123
    waiter(clock, None)(0.0123)
    assert clock.calls[0] == ("sleep", pytest.approx(0.0123 - FALLBACK_SPIN_S))
    assert {kind for kind, _ in clock.calls[1:]} == {"idle"}
    assert due <= clock.now < due + 20e-6


def test_a_start_due_sooner_than_the_spin_never_blocks() -> None:
    clock = Clock()
    waiter(clock, FakeTimer(clock))(MIN_SPIN_S / 2)
    assert {kind for kind, _ in clock.calls} == {"idle"}
    before = len(clock.calls)
    waiter(clock, FakeTimer(clock))(0.0)  # already due: back at once
    assert len(clock.calls) == before


def test_the_kernel_timer_is_readable_at_its_time_and_not_before() -> None:
    timer = precise_timer()
    if timer is None:
        pytest.skip("no timerfd on this system (the waiter falls back to gevent's timer)")
    assert isinstance(timer, Timerfd)
    try:
        timer.arm(time.perf_counter() + 3600)
        assert select.select([timer.fd], [], [], 0)[0] == []  # armed for later: not readable
        at = time.perf_counter() + 0.005
        timer.arm(at)
        assert select.select([timer.fd], [], [], 5)[0] == [timer.fd]
        assert time.perf_counter() >= at  # a timerfd never fires early
        timer.clear()
        assert select.select([timer.fd], [], [], 0)[0] == []  # cleared until armed again
        timer.arm(time.perf_counter())
        assert select.select([timer.fd], [], [], 5)[0] == [timer.fd]  # expired, not read
        timer.arm(time.perf_counter() + 3600)
        assert select.select([timer.fd], [], [], 0)[0] == []  # arming again cleared it
    finally:
        timer.close()


PROMPT_POOL_SCRIPT = """
import gevent
from authzkit.loadtest.record.prompt import PromptPool

order = []

def call(n):
    order.append(("call", n))
    gevent.sleep(0.001)  # its first wait: the scheduler runs on from here
    order.append(("answer", n))

def scheduler():
    pool = PromptPool(2)
    for n in range(3):
        pool.spawn(call, n)
        order.append(("spawned", n))
    pool.join()

gevent.spawn(scheduler).join()
print(order)
"""


def test_a_spawned_call_starts_before_the_scheduler_goes_on() -> None:
    """gevent's own pool runs a call a loop turn after its spawn (the scheduler spawns
    all three first); the open model's runs it at once, until its first wait, and the third
    call waits for room in a pool of two. In a child: the suite never imports gevent."""
    run = subprocess.run(
        [sys.executable, "-c", PROMPT_POOL_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    order = ast.literal_eval(run.stdout)
    assert order[:4] == [("call", 0), ("spawned", 0), ("call", 1), ("spawned", 1)]
    assert order.index(("call", 2)) > order.index(("answer", 0))  # the pool was full
    assert sorted(order) == sorted(
        [(kind, n) for n in range(3) for kind in ("call", "spawned", "answer")]
    )


REUSE_SCRIPT = """
import gevent
from authzkit.loadtest.record.prompt import PromptPool

ran, runners = [], set()

def call(n):
    runners.add(id(gevent.getcurrent()))
    gevent.sleep(0.001)
    if n == 1:
        raise ValueError("call 1 broke")
    ran.append(n)

def stuck():
    ran.append("stuck started")
    gevent.sleep(60)
    ran.append("stuck answered")

def scheduler():
    pool = PromptPool(2)
    for n in range(6):
        pool.spawn(call, n)
        pool.join()  # each call is over before the next starts
    pool.spawn(stuck)
    pool.kill()
    print([ran, len(runners), len(pool)])

gevent.spawn(scheduler).join()
"""


def test_calls_run_on_greenlets_whose_call_is_over_and_an_error_is_reported() -> None:
    """Six calls one after another run on one greenlet; the one that raises is reported
    like a spawned greenlet's error and the next still runs; a kill ends a call in flight."""
    run = subprocess.run(
        [sys.executable, "-c", REUSE_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    ran, runners, left = ast.literal_eval(run.stdout)
    assert ran == [0, 2, 3, 4, 5, "stuck started"]
    assert runners == 1
    assert left == 0
    assert "ValueError: call 1 broke" in run.stderr
