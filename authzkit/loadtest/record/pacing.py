"""The open model's wait for its next start, to the microsecond, without a busy process.

gevent's timers are libev's, and libev waits in ``epoll_wait``, whose timeout is whole
milliseconds rounded UP: a start due in 2.3 ms is woken at 3 ms or later. At modest rates
(where the loop has nothing else to do) every start was sent about a millisecond late, and
the open model reports a start's lateness as the service's latency. The cure at the root is
a precise timer the loop can wait on: a Linux ``timerfd`` armed at the start's absolute
time (nanoseconds on ``CLOCK_MONOTONIC``, the clock of ``time.perf_counter``) is a file
descriptor that becomes readable then, and epoll returns as soon as it does. But a CPU
that went idle between starts wakes late too: on this kind of virtual machine an epoll on
a timerfd returned 170 µs after its time at 20 starts/s (94 µs at 100/s). So the timer is
armed a little early and the rest is spent running the loop (``gevent.idle``: answers are
handled meanwhile): :func:`spin_for` a gap, at most :data:`SPIN_S` and at most
:data:`SPIN_SHARE` of the gap (so the spin costs at most that share of a core), but at
least :data:`MIN_SPIN_S` (a shorter wait is spun whole).
Measured (20 / 100 / 400 starts/s): lateness p50 90 / 86 / 22 µs with a 100 µs spin,
14 / 5 / 4 µs with 300 µs, at 0.8 / 4 / 13 % of a core; the share caps the last at 5 %.

Where ``timerfd`` is missing (not Linux), the wait falls back to gevent's timer for all but
the last millisecond and runs the loop for the rest: punctual too, at the CPU of a spin of
up to a millisecond per start. Free of locust; gevent is passed in, so tests give a fake.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import time
from collections.abc import Callable
from typing import Any

SPIN_S = 300e-6  # the longest last stretch before a start: run the loop, do not block
SPIN_SHARE = 0.05  # and never more than this share of the wait (of a core's time)
MIN_SPIN_S = 50e-6  # but a wait this short is spun whole: a block would wake later
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

    def arm(self, at: float) -> None:
        """Become readable at ``at`` (seconds on ``time.perf_counter``'s clock)."""
        seconds = int(at)
        value = _Timespec(seconds, int((at - seconds) * 1e9))
        spec = _Itimerspec(_Timespec(0, 0), value)
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, ctypes.byref(spec), None) != 0:
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
    """How long before a start ``seconds`` away the loop runs instead of blocking."""
    return min(SPIN_S, max(MIN_SPIN_S, SPIN_SHARE * seconds))


class StartWaiter:
    """``waiter(seconds)``: return when ``seconds`` have passed on ``clock``, never before,
    with the event loop running meanwhile. ``wait_read`` blocks the calling greenlet until
    a descriptor is readable, ``sleep`` on a (millisecond) timer, ``idle`` runs the loop
    once; gevent's by default."""

    def __init__(
        self,
        timer: Timerfd | None,
        *,
        clock: Callable[[], float] = time.perf_counter,
        wait_read: Callable[[int], Any] | None = None,
        sleep: Callable[[float], Any] | None = None,
        idle: Callable[[], Any] | None = None,
    ) -> None:
        if wait_read is None or sleep is None or idle is None:
            import gevent
            from gevent.socket import wait_read as gevent_wait_read

            wait_read, sleep, idle = gevent_wait_read, gevent.sleep, gevent.idle
        self.timer = timer
        self._clock, self._wait_read, self._sleep, self._idle = clock, wait_read, sleep, idle

    def __call__(self, seconds: float) -> None:
        due = self._clock() + seconds
        spin = spin_for(seconds) if self.timer is not None else FALLBACK_SPIN_S
        if seconds > spin:
            self._block_until(due - spin)
        while self._clock() < due:
            self._idle()

    def _block_until(self, at: float) -> None:
        if self.timer is None:
            self._sleep(max(at - self._clock(), 0.0))
            return
        self.timer.arm(at)
        self._wait_read(self.timer.fd)
        self.timer.clear()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.close()


__all__ = [
    "FALLBACK_SPIN_S",
    "MIN_SPIN_S",
    "SPIN_S",
    "SPIN_SHARE",
    "StartWaiter",
    "Timerfd",
    "precise_timer",
    "spin_for",
]
