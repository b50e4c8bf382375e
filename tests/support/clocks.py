"""The clock of the session's sandboxes: wall time, moved ahead by tests, frozen on request."""

from __future__ import annotations

import time

from authzkit.wire.clock import ManualClock


class FollowingClock(ManualClock):
    """A ManualClock that runs with wall time, plus whatever ``advance`` added.

    ``freeze()`` stops it where it is (then only ``advance`` moves it, as a plain
    :class:`ManualClock`): for tests of exact expiry boundaries. ``rewind()`` (between tests)
    brings it back to running wall time.
    """

    def __init__(self) -> None:
        super().__init__(0.0)
        self._offset = 0.0
        self._frozen: float | None = None

    def __call__(self) -> float:
        if self._frozen is not None:
            return self._frozen + self._offset
        return time.time() + self._offset

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self._offset += seconds
        return self()

    def freeze(self) -> float:
        """Stop the clock at its current whole second (it moves only by ``advance`` from now
        on, as a ManualClock does; whole seconds keep expiry boundaries exact)."""
        if self._frozen is None:
            self._frozen = float(int(time.time()))
        return self()

    def rewind(self) -> None:
        """Back to running wall time (between tests only: it is the one backwards move)."""
        self._offset = 0.0
        self._frozen = None

    def __repr__(self) -> str:
        state = ", frozen" if self._frozen is not None else ""
        return f"FollowingClock(offset={self._offset!r}{state})"


__all__ = ["FollowingClock"]
