"""Ctrl-C and SIGTERM during ``authzkit loadtest``: stop cleanly, once.

Python ends a process on SIGTERM without running ``finally`` blocks, so a killed run left
its sandbox process, locust and its temporary folders behind. Inside :func:`interruptible`
both signals raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, and the
first one also ignores any further one: the clean-up that follows (stop locust, stop the
sandbox, remove the temporary folders, write the partial report) runs to its end even when
a user presses Ctrl-C again.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop by ``signum``; the exit code is ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        """``SIGINT`` or ``SIGTERM``."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal."""
        return 128 + self.signum


def _raise(signum: int, frame: Any) -> None:
    for sig in SIGNALS:  # the clean-up must not be interrupted in turn
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` inside the block (main thread only:
    elsewhere Python cannot install handlers, and the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def shielded() -> Iterator[list[int]]:
    """Inside the block (a clean-up) SIGINT and SIGTERM are noted, not raised: the list it
    yields holds the signals that arrived, for the caller to honour once done."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def note(signum: int, frame: Any) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in SIGNALS}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["SIGNALS", "Interrupted", "interruptible", "shielded"]
