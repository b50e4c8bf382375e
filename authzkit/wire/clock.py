"""Injectable time: every expiry (tokens, challenges, TOTP) reads a ``Clock``, never ``time``.

A clock is any zero-argument callable returning seconds since the epoch as a float, so
``time.time`` is the real one and tests pass a :class:`ManualClock` instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]

system_clock: Clock = time.time


class ManualClock:
    """A clock that only moves when told to (for tests and notebooks)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` and return the new time."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._now += seconds
        return self._now

    def __repr__(self) -> str:
        return f"ManualClock({self._now!r})"


__all__ = ["Clock", "ManualClock", "system_clock"]
