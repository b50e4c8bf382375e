"""The open model's wait for its next start, to the microsecond, without a busy process.

Why: gevent's timer wakes in whole milliseconds, rounded up. A Linux ``timerfd`` armed a
little early, then the loop run for the rest (at most a small share of a core); elsewhere
gevent's timer and a millisecond's spin (docs/internals.md, "The wait for the next start").
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import time
from collections.abc import Callable
from typing import Any

from authzkit.loadtest.record.quiet import QuietStretches

SPIN_S = 300e-6  # the longest last stretch before a start: run the loop, do not block
# and never more than this share of the wait: at most 1 % of a core, whatever the rate (at
# 5 % the spin was a third of a request's CPU at 1,000/s, for lateness k6 is 250 µs behind)
SPIN_SHARE = 0.01
MIN_SPIN_S = 50e-6  # a wait this short is spun whole: a block would wake later
# How much one wake-up moves the estimate of the timer's delay, which sets how early it is
# armed (within spin_for): up fast after a later wake, down slowly, so the estimate stays
# near the slow wakes' delay and the loop spins only for what a quicker wake leaves.
DELAY_RISE = 1 / 2
DELAY_FALL = 1 / 32
FALLBACK_SPIN_S = 0.001  # without a timerfd: libev's rounding, run the loop instead
_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = os.O_CLOEXEC
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class Timerfd:
    """A Linux ``timerfd`` on ``CLOCK_MONOTONIC``: :meth:`arm` it at an absolute
    ``perf_counter`` time, wait until its descriptor is readable, :meth:`clear` it."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self._settime = libc.timerfd_settime
        self.fd = int(libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC))
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self._spec = _Itimerspec(_Timespec(0, 0), _Timespec(0, 0))  # reused by every arm
        self._value = self._spec.it_value
        self._spec_ref = ctypes.byref(self._spec)

    def arm(self, at: float) -> None:
        """Become readable at ``at`` (seconds on ``time.perf_counter``'s clock)."""
        seconds = int(at)
        value = self._value
        value.tv_sec, value.tv_nsec = seconds, int((at - seconds) * 1e9)
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, self._spec_ref, None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def clear(self) -> None:
        """Read the expiry count, so the descriptor is not readable until armed again."""
        with contextlib.suppress(BlockingIOError):  # not expired: nothing to clear
            os.read(self.fd, 8)

    def close(self) -> None:
        os.close(self.fd)


def precise_timer() -> Timerfd | None:
    """A :class:`Timerfd`, or ``None`` where the system has none."""
    try:
        return Timerfd()
    except (OSError, AttributeError, TypeError):  # not Linux: no such libc function
        return None


def spin_for(seconds: float) -> float:
    """How long before a start ``seconds`` away the loop may run instead of blocking."""
    return min(SPIN_S, SPIN_SHARE * seconds)


class StartWaiter:
    """``waiter(seconds)``: return when ``seconds`` have passed on ``clock``, never before,
    with the event loop running meanwhile. ``wait_read`` blocks the calling greenlet until
    a descriptor is readable, ``sleep`` on a (millisecond) timer, ``idle`` runs the loop
    once; gevent's by default. The timer is armed as early as it has lately woken late
    (within :func:`spin_for`), so the loop runs only for what its delay leaves. Each
    block opens ``quiet`` until the timer's time: background steps run then."""

    def __init__(
        self,
        timer: Timerfd | None,
        *,
        clock: Callable[[], float] = time.perf_counter,
        wait_read: Callable[[int], Any] | None = None,
        sleep: Callable[[float], Any] | None = None,
        idle: Callable[[], Any] | None = None,
        quiet: QuietStretches | None = None,
    ) -> None:
        if wait_read is None or sleep is None or idle is None:
            import gevent

            wait_read, sleep, idle = _readable(timer), gevent.sleep, gevent.idle
        self.timer = timer
        self._quiet = quiet
        self._clock, self._wait_read, self._sleep, self._idle = clock, wait_read, sleep, idle
        self.delay = SPIN_S  # the timer's wake-up delay as lately seen (seconds past its time)

    def __call__(self, seconds: float) -> None:
        clock = self._clock
        due = clock() + seconds
        if self.timer is None:
            if seconds > FALLBACK_SPIN_S:
                self._opened(due - FALLBACK_SPIN_S)
                self._sleep(max(due - FALLBACK_SPIN_S - clock(), 0.0))
        elif seconds > MIN_SPIN_S:  # shorter: spun whole
            self._block_until(due - min(self.delay, spin_for(seconds)))
        if clock() < due:
            if self.timer is not None:  # the loop runs now: its expiry must not wake it
                self.timer.clear()
            while clock() < due:
                self._idle()
        # else the timer stays expired, unread: arming it again clears it, and no loop
        # runs before (a read a start saved)

    def _block_until(self, at: float) -> None:
        timer = self.timer
        assert timer is not None
        timer.arm(at)
        self._opened(at)
        self._wait_read(timer.fd)
        late = min(max(self._clock() - at, 0.0), SPIN_S)
        self.delay += (late - self.delay) * (DELAY_RISE if late > self.delay else DELAY_FALL)

    def _opened(self, until: float) -> None:
        if self._quiet is not None:  # background steps may run until then
            self._quiet.open(until)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.close()


def _readable(timer: Timerfd | None) -> Callable[[int], Any]:
    """gevent's wait until ``timer`` is readable, on one watcher kept for every wait."""
    from gevent import get_hub
    from gevent.socket import wait_read

    if timer is None:
        waits: Callable[[int], Any] = wait_read
        return waits
    hub = get_hub()
    watcher = hub.loop.io(timer.fd, 1)
    return lambda _fd: hub.wait(watcher)


__all__ = [
    "DELAY_FALL",
    "DELAY_RISE",
    "FALLBACK_SPIN_S",
    "MIN_SPIN_S",
    "SPIN_S",
    "SPIN_SHARE",
    "StartWaiter",
    "Timerfd",
    "precise_timer",
    "spin_for",
]
