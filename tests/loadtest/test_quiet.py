"""Background steps wait for a stretch the schedule leaves free: at once without a
schedule, inside an open stretch with room for them, else after their patience. Checked
with a clock that moves only when something waits, and the start waiter's own calls."""

from __future__ import annotations

from collections.abc import Callable

from authzkit.loadtest.record.pacing import StartWaiter
from authzkit.loadtest.record.quiet import PATIENCE_S, STEP_S, QuietStretches


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Event:
    """gevent's Event as the steps use it: ``wait(timeout)`` runs what happens meanwhile
    (``meanwhile``, once) and otherwise lets the whole timeout pass."""

    made: list[Event] = []

    def __init__(self, clock: Clock, meanwhile: list[Callable[[], None]]) -> None:
        self.clock, self.meanwhile, self.is_set, self.waits = clock, meanwhile, False, 0
        Event.made.append(self)

    def set(self) -> None:
        self.is_set = True

    def wait(self, timeout: float) -> None:
        self.waits += 1
        if self.meanwhile:
            self.meanwhile.pop(0)()
        if not self.is_set:
            self.clock.now += timeout


def stretches(meanwhile: list[Callable[[], None]] | None = None) -> tuple[QuietStretches, Clock]:
    clock = Clock()
    Event.made = []
    things = meanwhile if meanwhile is not None else []
    return QuietStretches(clock, event=lambda: Event(clock, things)), clock


def test_without_a_schedule_a_step_goes_on_at_once() -> None:
    quiet, clock = stretches()
    quiet.wait()
    assert clock.now == 50.0 and Event.made == []


def test_a_step_runs_in_the_stretch_the_schedule_opens_not_after_its_patience() -> None:
    meanwhile: list[Callable[[], None]] = []
    quiet, clock = stretches(meanwhile)
    quiet.begin()
    meanwhile.append(lambda: quiet.open(clock.now + 0.004))  # the schedule blocks 4 ms
    quiet.wait()
    assert clock.now == 50.0  # no patience spent
    assert [event.is_set for event in Event.made] == [True]


def test_a_stretch_too_short_for_the_step_is_passed_by() -> None:
    meanwhile: list[Callable[[], None]] = []
    quiet, clock = stretches(meanwhile)
    quiet.begin()
    meanwhile.append(lambda: quiet.open(clock.now + STEP_S / 2))  # too short
    meanwhile.append(lambda: quiet.open(clock.now + 2 * STEP_S))  # long enough
    quiet.wait()
    assert clock.now == 50.0
    assert len(Event.made) == 2  # it waited again after the short one


def test_with_no_stretch_long_enough_a_step_runs_after_its_patience() -> None:
    quiet, clock = stretches()
    quiet.begin()
    quiet.wait()
    assert clock.now - 50.0 == PATIENCE_S


def test_a_stretch_already_open_serves_a_step_that_comes_later() -> None:
    meanwhile: list[Callable[[], None]] = []
    quiet, clock = stretches(meanwhile)
    quiet.begin()
    meanwhile.append(lambda: quiet.open(clock.now + 0.004))
    quiet.wait()
    clock.now += 0.001  # the first step took a millisecond: 3 ms of the stretch are left
    quiet.wait()
    assert len(Event.made) == 1


def test_the_end_of_the_schedule_lets_waiting_steps_go_and_a_new_one_starts_closed() -> None:
    meanwhile: list[Callable[[], None]] = []
    quiet, clock = stretches(meanwhile)
    quiet.begin()
    meanwhile.append(quiet.end)
    quiet.wait()
    assert clock.now == 50.0
    quiet.begin()  # a later schedule: the end's open stretch does not carry over
    quiet.wait()
    assert clock.now - 50.0 == PATIENCE_S


def test_two_schedules_in_one_process_open_nothing() -> None:
    meanwhile: list[Callable[[], None]] = []
    quiet, clock = stretches(meanwhile)
    quiet.begin()
    quiet.begin()
    meanwhile.append(lambda: quiet.open(clock.now + 0.004))  # one user's stretch only
    quiet.wait()
    assert clock.now - 50.0 == PATIENCE_S


class Recording:
    """A QuietStretches that records what the start waiter tells it."""

    def __init__(self) -> None:
        self.opened: list[float] = []

    def open(self, until: float) -> None:
        self.opened.append(until)


class Timer:
    fd = 3

    def __init__(self, clock: Clock) -> None:
        self.clock, self.armed = clock, 0.0

    def arm(self, at: float) -> None:
        self.armed = at

    def clear(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_start_waiter_opens_the_stretch_until_its_timer_is_due() -> None:
    clock = Clock()
    timer = Timer(clock)
    quiet = Recording()

    def wait_read(_fd: int) -> None:
        clock.now = timer.armed

    def idle() -> None:
        clock.now += 10e-6

    waiter = StartWaiter(
        timer,  # type: ignore[arg-type]
        clock=clock,
        wait_read=wait_read,
        sleep=lambda _s: None,
        idle=idle,
        quiet=quiet,  # type: ignore[arg-type]
    )
    waiter(0.005)
    assert quiet.opened == [timer.armed]
    assert 50.0 < timer.armed < 50.005
    waiter(20e-6)  # spun whole: no block, nothing opened
    assert len(quiet.opened) == 1
