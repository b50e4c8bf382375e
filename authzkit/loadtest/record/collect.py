"""Answers read at the schedule's own wakes, not on a wake of their own.

Why: each wake of the process costs CPU, and the schedule wakes for every start anyway. A
call waits for its answer on a poller no loop watches; the schedule, once awake for a start,
resumes the calls whose answers came. Their time comes from the kernel's receive stamp
(:mod:`~authzkit.loadtest.record.keepalive`), so the later read changes no measurement.
"""

from __future__ import annotations

import contextlib
import select
import time
from typing import Any, Protocol

# The longest wait before the next start that still holds answers for it; a longer one
# lets every waiting call read its answer as it comes.
HOLD_S = 0.05
# How often a wake looks for answers while the next start is near: a few read together
# cost less each than one after every wake (the caches stay warm), and the kernel's stamps
# keep their times. At 200/s every wake looks; at 2,000/s every fourth. A look comes sooner
# once LOOK_AFTER calls were held since the last, and at every wake with less than
# LOOK_ROOM_S before its next start: there a batch would hold the start back.
LOOK_EVERY_S = 0.002
LOOK_AFTER = 4
LOOK_ROOM_S = 200e-6
# How long before the next start a wake stops ending held calls (one takes ~30 µs).
SPARE_S = 100e-6
LOOK_BEYOND = 32  # answers a wake looks at beyond those it must end
_clock = time.perf_counter
READY, AS_USUAL, LATE = 0, 1, 2  # how a wait ends: its answer came, let go, out of time
_EPOLLIN = select.EPOLLIN


class Held(Protocol):
    """A call with no greenlet of its own, held by the collector until :meth:`collected`."""

    def collected(self, outcome: int) -> None: ...


class AnswerCollector:
    """Calls waiting for answers, resumed by :meth:`collect` at the schedule's wakes.

    A connection stays registered with the poller from its first wait until it closes (the
    kernel then forgets it): no system call a request. One that is readable while no call
    waits on it (the server closed it while idle) is marked ``gone`` for its pool and let
    out."""

    def __init__(self, poller: Any = None) -> None:
        self.active = False  # the schedule wakes again soon: calls may wait here
        # the epoll (the system's, made at the first wait), gevent's hub and getcurrent
        self._poller: Any = poller
        self._hub: Any = None
        self._current: Any = None
        self._waiting: dict[int, tuple[Any, float]] = {}  # fd: (greenlet, deadline)
        self._held: dict[int, tuple[Held, float]] = {}  # fd: (call, deadline)
        self._watched: dict[int, Any] = {}  # fd: the connection registered on it
        self._new = 0  # calls held since the last look
        self.look_every = LOOK_EVERY_S
        self._next_look = float("-inf")  # no look before this (perf_counter)

    def wait(self, sock: Any, deadline: float) -> None:
        """Block the calling greenlet until ``sock``'s answer came (seen at a wake), or it
        is let go to read as usual; ``TimeoutError`` once ``deadline`` (``perf_counter``)
        passed. Returns at once when the collector is not active."""
        if not self.active:
            return
        if self._current is None:
            from gevent import get_hub, getcurrent

            self._hub, self._current = get_hub(), getcurrent
        fd = self.watch(sock)
        self._waiting[fd] = (self._current(), deadline)
        try:
            outcome = self._hub.switch()
        finally:
            self._waiting.pop(fd, None)  # killed while waiting
        if outcome == LATE:
            raise TimeoutError("timed out")

    def hold(self, sock: Any, deadline: float, call: Held) -> None:
        """Keep ``call`` until ``sock``'s answer came (seen at a wake), it is let go, or
        ``deadline`` passed: then ``call.collected`` is told which, from the schedule's
        greenlet. Only while :attr:`active`."""
        self._held[self.watch(sock)] = (call, deadline)
        self._new += 1

    def watch(self, sock: Any) -> int:
        """Have the poller watch ``sock`` (once per connection); its descriptor (``sock.fd``:
        the connections of :mod:`~authzkit.loadtest.record.keepalive` keep theirs)."""
        fd: int = sock.fd
        if self._watched.get(fd) is not sock:  # a new connection (its number maybe reused)
            if self._poller is None:
                from gevent import monkey

                # the system's epoll: gevent's monkey-patching hides it from ``select``
                self._poller = monkey.get_original("select", "epoll")()
            try:
                self._poller.register(fd, _EPOLLIN)
            except FileExistsError:
                self._poller.modify(fd, _EPOLLIN)
            self._watched[fd] = sock
        return fd

    def collect(self, next_at: float | None, now: float) -> None:
        """At a wake of the schedule (``now``; its next start at ``next_at``, ``None`` for
        none soon): resume the calls whose answers came or whose time ran out, and wait here
        only while the next wake is within :data:`HOLD_S`. Calls are ended here until
        :data:`SPARE_S` before the next start, and at least as many as were held since
        the last look (so they keep pace with the starts) or a quarter of those held (so a
        backlog drains even while the schedule is behind, never taking every connection);
        the rest wait for a later wake (the start goes first). While the next start is
        near (yet :data:`LOOK_ROOM_S` away), a wake looks at most every :attr:`look_every`
        seconds, or once :data:`LOOK_AFTER` calls were held since the last look."""
        if (
            self.active
            and now < self._next_look
            and self._new < LOOK_AFTER
            and next_at is not None
            and LOOK_ROOM_S < next_at - now <= HOLD_S
        ):
            return  # a look a moment ago, few calls held since, and a wake soon
        self._next_look = now + self.look_every
        waiting, held = self._waiting, self._held
        least, self._new = max(self._new, 1, len(held) >> 2), 0
        if waiting or held:
            until = float("inf") if next_at is None else next_at - SPARE_S
            ended = 0
            # a bounded look: the rest stay ready for the next wake (a backlog read whole at
            # every wake cost as much as ending it, and grew)
            for fd, _ in self._poller.poll(0, least + LOOK_BEYOND):
                if fd in held:
                    if ended >= least and _clock() > until:
                        break  # not judged late meanwhile: it is still readable
                    ended += 1
                    self._resume(fd, READY)
                elif fd in waiting:
                    self._resume(fd, READY)
                else:  # readable with no call waiting: closed by the server while idle
                    self._gone(fd)
            else:
                self._time_out(now)
        self.active = next_at is not None and next_at - now <= HOLD_S
        if not self.active:
            self.release()

    def _gone(self, fd: int) -> None:
        """A connection readable while no call waits on it: the server closed it (or sent
        what no request asked for). Its pool is told (``gone``), and the poller forgets it."""
        sock = self._watched.pop(fd, None)
        if sock is not None:
            sock.gone = True
        with contextlib.suppress(OSError):
            self._poller.unregister(fd)

    def _time_out(self, now: float) -> None:
        """End the calls whose deadline passed (their answers did not come)."""
        for calls in (self._waiting, self._held):
            while calls:  # in order of their writes: the first not late ends it
                fd, (_, deadline) = next(iter(calls.items()))
                if deadline > now:
                    break
                self._resume(fd, LATE)

    def release(self) -> None:
        """Let every waiting call read its answer as usual (no wake is coming soon)."""
        self.active = False
        for fd in [*self._waiting, *self._held]:
            self._resume(fd, AS_USUAL)

    def _resume(self, fd: int, outcome: int) -> None:
        found = self._held.pop(fd, None)
        if found is not None:
            found[0].collected(outcome)
            return
        call = self._waiting.pop(fd)[0]
        self._hub.loop.run_callback(_switch, call, outcome)


def _switch(call: Any, outcome: int) -> None:
    if not call.dead:
        call.switch(outcome)


COLLECTOR = AnswerCollector()  # this process's (one schedule per Locust process)

__all__ = [
    "AS_USUAL",
    "COLLECTOR",
    "HOLD_S",
    "LATE",
    "LOOK_AFTER",
    "LOOK_BEYOND",
    "LOOK_EVERY_S",
    "LOOK_ROOM_S",
    "READY",
    "SPARE_S",
    "AnswerCollector",
    "Held",
]
