"""The open model's pool of calls in flight, whose calls start the moment they are spawned.

Why: ``Pool.spawn`` runs a call a loop turn later, reported as the service's latency; here
the scheduler switches into it at once, its greenlet made between starts (docs/internals.md,
"Calls that start when spawned").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gevent
from gevent.pool import Pool

_Task = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def _run(task: list[_Task]) -> Any:
    """A ready greenlet's body: the call it was given when its start came."""
    func, args, kwargs = task.pop()
    return func(*args, **kwargs)


class PromptPool(Pool):  # type: ignore[misc]  # gevent ships no type hints
    """A :class:`gevent.pool.Pool` whose :meth:`spawn` runs the call now, not a turn later."""

    def __init__(self, size: int | None = None) -> None:
        super().__init__(size)
        self._ready: tuple[Any, list[_Task]] | None = None

    def _make_ready(self) -> tuple[Any, list[_Task]]:
        task: list[_Task] = []
        return self.greenlet_class(_run, task), task

    def spawn(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hub = gevent.get_hub()
        scheduler = gevent.getcurrent()
        if scheduler is hub:  # nothing to come back to: start it the usual way
            return super().spawn(func, *args, **kwargs)
        if self.full():  # the in-flight cap: wait for room, like Pool.spawn
            self.wait_available()
        call, task = self._ready or self._make_ready()
        self._ready = None
        task.append((func, args, kwargs))
        # Back here on the loop's next turn (whether or not the call waited); meanwhile the
        # call runs until its first wait, then the loop carries on.
        hub.loop.run_callback(scheduler.switch)
        call.switch()
        self.add(call)  # room was made above; a call already over is discarded at once
        self._ready = self._make_ready()  # the next start's greenlet, made between starts
        return call


__all__ = ["PromptPool"]
