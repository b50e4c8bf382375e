"""The open model reads its answers at the schedule's own wakes: a call that got its answer
is not woken by it, yet is timed when the answer came (the kernel's receive stamp); a call
whose time ran out fails as a timeout; let go, a call reads as usual. In a child process
(the suite never imports gevent), against a server that answers after a set delay."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from authzkit.loadtest.record.collect import (
    AS_USUAL,
    HOLD_S,
    LATE,
    LOOK_AFTER,
    LOOK_BEYOND,
    LOOK_EVERY_S,
    LOOK_ROOM_S,
    READY,
    AnswerCollector,
)
from authzkit.loadtest.record.schedule import ScheduleStats, run_schedule

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
DELAY_S = 0.02  # the server's answer time
HELD_S = 0.5  # how long the child's schedule does not wake

CHILD = """
from gevent import monkey; monkey.patch_all()
import json, sys, time
import gevent
from authzkit.loadtest.record.collect import AnswerCollector
from authzkit.loadtest.record.keepalive import KeptAlive

url, timeout, held, how = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
collector = AnswerCollector()
wire = KeptAlive(url, timeout=timeout, collector=collector)
request = wire.request_bytes("POST", {}, b"{}")
seen = []

def call():
    try:
        answer = wire.exchange(request)
    except OSError as exc:
        seen.append({"error": type(exc).__name__, "age": time.perf_counter() - started})
        return
    seen.append({"status": answer.status, "took": answer.ended - answer.write_ended,
                 "read_after": time.perf_counter() - answer.write_ended})

started = time.perf_counter()
collector.collect(started + 0.01, started)  # the schedule wakes again soon: calls wait
call_greenlet = gevent.spawn(call)
gevent.sleep(held)  # no wake of the schedule meanwhile
before = list(seen)
now = time.perf_counter()
if how == "wake":
    collector.collect(now + 0.01, now)
else:
    collector.release()
call_greenlet.join(timeout=5)
print(json.dumps({"before": before, "after": seen}))
"""


@pytest.fixture
def late_server() -> Iterator[tuple[str, list[int]]]:
    """A server answering each request after :data:`DELAY_S` (``answers=[0]``: never)."""
    listening = socket.create_server(("127.0.0.1", 0))
    answers = [1]

    def serve() -> None:
        while True:
            try:
                conn, _ = listening.accept()
            except OSError:
                return
            with conn:
                try:
                    while conn.recv(65536):
                        if answers[0]:
                            threading.Event().wait(DELAY_S)
                            conn.sendall(ANSWER)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listening.getsockname()[1]}/api/v1/authorize", answers
    listening.close()


def child(url: str, how: str, *, timeout: float = 5.0) -> dict[str, list[dict[str, Any]]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(timeout), str(HELD_S), how],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, list[dict[str, Any]]] = json.loads(done.stdout)
    return found


def test_an_answer_waits_for_the_wake_yet_is_timed_when_it_came(
    late_server: tuple[str, list[int]],
) -> None:
    url, _ = late_server
    found = child(url, "wake")
    assert found["before"] == []  # the answer came long before, and woke nobody
    [call] = found["after"]
    assert call["status"] == 200
    assert call["read_after"] >= HELD_S / 2  # read at the wake...
    assert DELAY_S <= call["took"] < HELD_S / 2  # ...timed when it arrived


def test_a_call_let_go_reads_its_answer_as_usual(late_server: tuple[str, list[int]]) -> None:
    url, _ = late_server
    found = child(url, "release")
    assert found["before"] == []
    [call] = found["after"]
    assert call["status"] == 200
    assert DELAY_S <= call["took"] < HELD_S


def test_a_call_whose_time_ran_out_at_a_wake_is_a_timeout(
    late_server: tuple[str, list[int]],
) -> None:
    url, answers = late_server
    answers[0] = 0  # the server never answers
    found = child(url, "wake", timeout=0.1)
    assert found["before"] == []
    assert [call["error"] for call in found["after"]] == ["TimeoutError"]


class _Pool:
    def __init__(self, full_at: int) -> None:
        self.spawned: list[float] = []
        self.full_at = full_at

    def full(self) -> bool:
        return len(self.spawned) == self.full_at

    def wait_available(self) -> None:
        self.full_at = -1

    def spawn(self, call: object, intended_at: float) -> None:
        self.spawned.append(intended_at)


def test_the_schedule_tells_each_next_start_and_lets_go_before_waiting_for_room() -> None:
    told: list[float | None] = []
    pool = _Pool(full_at=2)
    now = [100.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    run_schedule(
        iter([0.0, 1.0, 2.0, 3.0]),
        lambda _at: None,
        pool=pool,
        stats=ScheduleStats(),
        clock=lambda: now[0],
        sleep=sleep,
        awake=told.append,
    )
    assert pool.spawned == [100.0, 101.0, 102.0, 103.0]
    # before each sleep the next start; before the wait for room (third start), None
    assert told == [100.0, 101.0, 102.0, None, 103.0]


class ReadyPoller:
    """A stand-in for the collector's epoll: ``ready`` are the descriptors it reports."""

    def __init__(self) -> None:
        self.ready: list[int] = []
        self.asked: list[int] = []  # how many events each poll asked for at most

    def register(self, fd: int, mask: int) -> None:
        pass

    def poll(self, timeout: float, maxevents: int = -1) -> list[tuple[int, int]]:
        self.asked.append(maxevents)
        return [(fd, 1) for fd in self.ready][: maxevents if maxevents > 0 else None]


class Connection:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


class Call:
    """A held call that notes how it ended (its answer read: no longer ready)."""

    def __init__(self, ended: list[tuple[int, int]], fd: int, poller: ReadyPoller) -> None:
        self.ended, self.fd, self.poller = ended, fd, poller

    def collected(self, outcome: int) -> None:
        self.ended.append((self.fd, outcome))
        if self.fd in self.poller.ready:
            self.poller.ready.remove(self.fd)


def held(
    count: int, deadline: float = 1e9, look_every: float = 0.0
) -> tuple[AnswerCollector, ReadyPoller, list[Any]]:
    """A collector holding ``count`` calls; by default every wake looks for answers."""
    poller, ended = ReadyPoller(), list[tuple[int, int]]()
    collector = AnswerCollector(poller)
    collector.look_every = look_every
    for fd in range(3, 3 + count):
        collector.hold(Connection(fd), deadline, Call(ended, fd, poller))
    return collector, poller, ended


def test_a_wake_ends_as_many_held_calls_as_were_held_since_the_last_even_when_a_start_is_due() -> (
    None
):
    collector, poller, ended = held(3)
    poller.ready = [3, 4, 5]
    collector.collect(0.0, 0.0)  # the next start is due now: still keeps pace with the starts
    assert ended == [(3, READY), (4, READY), (5, READY)]


def test_a_backlog_waits_for_the_start_then_ends_at_a_later_wake_never_judged_late() -> None:
    collector, poller, ended = held(3, deadline=5.0)
    collector.collect(0.01, 0.0)  # no answer yet
    poller.ready = [3, 4, 5]  # then all three at once
    collector.collect(10.0, 10.0)  # a start due, deadlines past: one ends, the rest wait
    assert ended == [(3, READY)]
    poller.ready = [4, 5]
    collector.collect(None, 10.0)  # no start soon: all of them
    assert ended == [(3, READY), (4, READY), (5, READY)]


def test_a_held_call_past_its_deadline_is_ended_late_and_the_rest_let_go() -> None:
    collector, _, ended = held(2, deadline=5.0)
    collector.collect(6.01, 6.0)
    assert ended == [(3, LATE), (4, LATE)]
    collector, _, ended = held(2)
    collector.collect(None, 0.0)  # no wake soon: let go to read as usual
    assert ended == [(3, AS_USUAL), (4, AS_USUAL)]


def test_a_wake_looks_at_a_bounded_number_of_answers_whatever_the_backlog() -> None:
    collector, poller, ended = held(100)
    collector.collect(0.01, 0.0)  # no answer yet
    poller.ready = list(range(3, 103))  # then all at once
    collector.collect(0.0, 0.0)  # a start due: a quarter of them end, no more is looked at
    assert len(ended) == 25 and poller.asked[-1] == 25 + LOOK_BEYOND
    collector.collect(None, 0.0)  # no start soon: the next bounded look, then let go
    assert [outcome for _, outcome in ended].count(READY) == 25 + (75 // 4 + LOOK_BEYOND)


def test_while_starts_are_near_a_wake_looks_for_answers_at_most_every_look_every_s() -> None:
    collector, poller, ended = held(0, look_every=LOOK_EVERY_S)
    collector.collect(0.0005, 0.0)  # the first look
    for fd in (3, 4):  # two calls held since, both answered
        collector.hold(Connection(fd), 1e9, Call(ended, fd, poller))
    poller.ready = [3, 4]
    collector.collect(0.001, 0.0005)  # a start near and a look a moment ago: not yet
    assert ended == [] and collector.active
    collector.collect(0.0025, LOOK_EVERY_S)  # the next look: both end
    assert ended == [(3, READY), (4, READY)]


def test_a_wake_before_a_far_start_looks_whenever_it_comes() -> None:
    collector, poller, ended = held(1, look_every=LOOK_EVERY_S)
    collector.collect(0.0005, 0.0)
    poller.ready = [3]
    collector.collect(HOLD_S + 1.0, 0.0005)  # no start soon: every call ends or is let go
    assert ended == [(3, READY)] and not collector.active


def test_a_wake_with_little_room_before_its_start_looks_every_time() -> None:
    collector, poller, ended = held(0, look_every=LOOK_EVERY_S)
    collector.collect(0.001, 0.0)
    collector.hold(Connection(3), 1e9, Call(ended, 3, poller))
    poller.ready = [3]
    collector.collect(0.0001 + LOOK_ROOM_S / 2, 0.0001)  # a batch would hold that start back
    assert ended == [(3, READY)]


def test_a_look_comes_sooner_once_look_after_calls_were_held() -> None:
    collector, poller, ended = held(0, look_every=LOOK_EVERY_S)
    collector.collect(0.001, 0.0)
    fds = list(range(3, 3 + LOOK_AFTER))
    for fd in fds:
        collector.hold(Connection(fd), 1e9, Call(ended, fd, poller))
    poller.ready = list(fds)
    collector.collect(0.002, 0.0005)  # within look_every, with room: yet enough are held
    assert ended == [(fd, READY) for fd in fds]
