"""The rate changed in place, as one process follows it (a fake clock, no gevent): the
starts of each announced step at its share of the rate, the wait between steps, the tally
of each step's calls (warm-up left out, calls still in flight judged at their age), and
the exact merge of several processes' tallies."""

from __future__ import annotations

from collections.abc import Iterator

from authzkit.loadtest.record.histograms import decode
from authzkit.loadtest.record.schedule import Step, SteppedRate
from authzkit.loadtest.record.steps import StepMerger, StepRecorder


class FakeClock:
    """Wall and schedule clocks in one: ``idle`` moves both on."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.idled = 0

    def __call__(self) -> float:
        return self.now

    def idle(self, seconds: float) -> None:
        self.idled += 1
        self.now += seconds


def following(rate: SteppedRate, clock: FakeClock) -> Iterator[float]:
    return rate.offsets(clock=clock, idle=clock.idle, poll=0.5)


def test_each_step_starts_its_share_of_the_rate_from_its_start() -> None:
    clock = FakeClock()
    rate = SteppedRate(workers=2, wall=clock)
    rate.announce(Step(0, rate=20.0, start=1001.0, seconds=1.0))
    offsets = following(rate, clock)
    first = [next(offsets) for _ in range(10)]  # 10/s in this process: 1.0, 1.1 … 1.9
    assert [round(o, 6) for o in first] == [round(1.0 + k / 10, 6) for k in range(10)]
    rate.announce(Step(1, rate=40.0, start=1003.0, seconds=0.5))
    second = [next(offsets) for _ in range(10)]  # 20/s from 3.0 for 0.5 s
    assert [round(o, 6) for o in second] == [round(3.0 + k / 20, 6) for k in range(10)]
    assert [b.step.index for b in rate.done] == [0]
    assert rate.bounds_at(clock.now + 1.05).step.index == 0  # type: ignore[union-attr]


def test_processes_interleave_their_constant_starts() -> None:
    """Three processes following one step start evenly spaced calls together, not three
    at once every tenth of a second."""
    starts = []
    for phase in range(3):
        clock = FakeClock()
        rate = SteppedRate(workers=3, phase=phase, wall=clock)
        rate.announce(Step(0, rate=30.0, start=1000.0, seconds=0.2))
        offsets = following(rate, clock)
        starts += [next(offsets), next(offsets)]  # 10/s each: two in 0.2 s
    assert [round(o * 30, 6) for o in sorted(starts)] == [0, 1, 2, 3, 4, 5]


def test_between_steps_the_process_waits_and_ends_when_stopped() -> None:
    clock = FakeClock()
    rate = SteppedRate(wall=clock)
    offsets = following(rate, clock)
    rate.announce(Step(0, rate=2.0, start=1000.0, seconds=1.0))
    assert [next(offsets), next(offsets)] == [0.0, 0.5]
    waited = clock.idled
    rate.stop()
    assert next(offsets, None) is None
    assert clock.idled == waited  # nothing announced, nothing waited for once stopped


def test_a_step_taken_up_late_skips_the_starts_it_missed() -> None:
    clock = FakeClock()
    rate = SteppedRate(wall=clock)
    offsets = following(rate, clock)
    rate.announce(Step(0, rate=10.0, start=999.0, seconds=2.0))  # began a second ago
    assert round(next(offsets), 6) == 0.0  # the start due now, not ten at once


def test_a_steps_tally_leaves_out_its_warm_up_and_judges_late_calls_at_their_age() -> None:
    clock = FakeClock()
    rate = SteppedRate(wall=clock)
    rate.announce(Step(0, rate=10.0, start=1000.0, seconds=1.0, warm_up=0.5, grace=0.2))
    offsets = following(rate, clock)
    recorder = StepRecorder(rate)
    starts = [next(offsets) + 1000.0 for _ in range(10)]
    for number, at in enumerate(starts):
        recorder.begin(number, at, at + 0.001)  # each sent 1 ms late
        if number in (5, 6):
            recorder.failed(number)
        if number != 9:
            recorder.end(number, at + 0.010)  # answered in 10 ms; the last one never
    assert recorder.closed(1001.1) == []  # starts not all sent: the step is still running
    rate.stop()  # the generator moves past the step (and, stopped, waits for no other)
    next(offsets, None)
    assert recorder.closed(1001.1) == []  # its last call is in flight, within the grace
    (part,) = recorder.closed(1001.25, in_flight=1)
    assert part["sent"] == 5 and part["answered"] == 4 and part["censored"] == 1
    assert part["failures"] == 2 and part["late"] == 0 and part["in_flight"] == 1
    latency = decode(part["latency"])
    assert latency.get_total_count() == 5
    assert latency.get_max_value() >= 340_000  # 1.25 - 0.9 s: the age it reached
    assert recorder.closed(1002.0) == []  # handed out once


def test_the_master_merges_every_processs_tally_exactly_once_all_came() -> None:
    parts = []
    for process in range(3):
        clock = FakeClock()
        rate = SteppedRate(workers=3, wall=clock)
        rate.announce(Step(0, rate=30.0, start=1000.0, seconds=1.0))
        offsets = following(rate, clock)
        recorder = StepRecorder(rate)
        for number in range(10):
            at = next(offsets) + 1000.0
            recorder.begin(number, at, at)
            recorder.end(number, at + 0.001 * (process + 1))
        rate.stop()
        next(offsets, None)
        parts.extend(recorder.closed(1002.0))
    merger = StepMerger(expected=3)
    assert merger.add(parts[0]) is None and merger.add(parts[1]) is None
    merged = merger.add(parts[2])
    assert merged is not None
    assert (merged["sent"], merged["answered"], merged["parts"]) == (30, 30, 3)
    latency = decode(merged["latency"])
    assert latency.get_total_count() == 30
    assert latency.get_min_value() == 1000
    assert latency.values_are_equivalent(latency.get_max_value(), 3000)
    assert merger.ready("a") is False and merger.ready("b") is False
    assert merger.ready("c") is True and merger.ready("c") is False
