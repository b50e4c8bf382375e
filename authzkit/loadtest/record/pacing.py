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
