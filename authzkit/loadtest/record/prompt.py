"""The open model's pool of calls in flight, whose calls start the moment they are spawned.

``gevent.pool.Pool.spawn`` only schedules a greenlet: it first runs on the event loop's next
turn, after every callback and ready watcher before it. The scheduler wakes on time (see
:mod:`~authzkit.loadtest.record.timer`), but a spawned call then stamped its start one loop
turn later: about 300 µs at modest rates, reported as the service's latency. Here the
scheduler switches into the new call at once; the call runs until it first waits (its
request is on the wire by then) and the loop resumes the scheduler on its next turn, as
``gevent.sleep(0)`` would. Imports gevent: only Locust's processes use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gevent
from gevent.pool import Pool


class PromptPool(Pool):  # type: ignore[misc]  # gevent ships no type hints
    """A :class:`gevent.pool.Pool` whose :meth:`spawn` runs the call now, not a turn later."""

    def spawn(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        call = self.greenlet_class(func, *args, **kwargs)
        self.add(call)  # waits for room when the pool is full, like Pool.spawn
        hub = gevent.get_hub()
        scheduler = gevent.getcurrent()
        if scheduler is hub:  # nothing to come back to: start it the usual way
            call.start()
            return call
        # Back here on the loop's next turn (whether or not the call waited); meanwhile the
        # call runs until its first wait, then the loop carries on.
        hub.loop.run_callback(scheduler.switch)
        call.switch()
        return call


__all__ = ["PromptPool"]
