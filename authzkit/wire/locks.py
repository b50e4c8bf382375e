"""One lock per object, made the first time it is needed.

Locust monkey-patches ``threading`` with gevent when it is imported. A ``threading.Lock``
created before that (at import time, or when an object is built in a module that Locust
imports later) is a real OS lock, and a greenlet blocking on it blocks every greenlet of the
process: a deadlock. Creating the lock on first use means it is always of the kind that
matches how the process runs by then. Token cache, key cache and sandbox stores share this.
"""

from __future__ import annotations

import threading
from typing import Any


class LazilyLocked:
    """Mixin: ``with self._lock:`` guards shared state; the lock is made on first use."""

    @property
    def _lock(self) -> Any:
        lock = self.__dict__.get("_lazy_lock")
        if lock is None:
            # dict.setdefault is atomic under the GIL: racing first callers share one lock.
            lock = self.__dict__.setdefault("_lazy_lock", threading.Lock())
        return lock


__all__ = ["LazilyLocked"]
