"""The open model's pool of calls in flight, whose calls start the moment they are spawned.

Why: ``Pool.spawn`` runs a call a loop turn later, reported as the service's latency; here
the scheduler switches into it at once, its greenlet made between starts (docs/internals.md,
"Calls that start when spawned").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import gevent
from gevent.pool import Pool

_Task = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class PromptPool(Pool):  # type: ignore[misc]  # gevent ships no type hints
    """A :class:`gevent.pool.Pool` whose :meth:`spawn` runs the call now, not a turn later,
    on one of its greenlets whose last call is over (a new one only when none is)."""

    def __init__(
        self, size: int | None = None, on_error: Callable[[Exception], Any] | None = None
    ) -> None:
        super().__init__(size)
        self._on_error = on_error  # told of a call's exception (else the hub prints it)
        self._parked: list[Any] = []  # greenlets whose call is over, waiting for the next
        self.held = 0  # calls in flight with no greenlet (record.collect holds them)

    def __len__(self) -> int:  # what the cap counts: every call in flight
        return len(self.greenlets) + self.held

    def full(self) -> bool:
        """Whether the cap is reached (``Pool.full`` less its ``free_count``: asked per start)."""
        return self.size is not None and len(self) >= self.size

    def hold(self) -> None:
        """A call in flight without a greenlet of its own takes a place (room is there)."""
        self._semaphore.acquire()
        self.held += 1
        self._empty_event.clear()

    def let_go(self) -> None:
        """A held call ended: its place is free."""
        self.held -= 1
        self._semaphore.release()
        if not self.greenlets and not self.held:
            self._empty_event.set()

    def adopt(self, func: Callable[..., Any], *args: Any) -> Any:
        """A held call goes on in a greenlet of its own, in its place (from the loop's
        next turn)."""
        self.held -= 1
        call = self.greenlet_class(self._once, (func, args, {}))
        self._track(call)
        call.start()
        return call

    def _once(self, task: _Task) -> None:
        me = gevent.getcurrent()
        func, args, kwargs = task
        try:
            func(*args, **kwargs)
        except Exception as exc:
            self._failed(me, exc)
        finally:
            self._ended(me)

    def _failed(self, call: Any, exc: Exception) -> None:
        """A call raised: ``on_error`` is told, else it is reported as a spawned
        greenlet's error is; the pool goes on either way."""
        if self._on_error is not None:
            self._on_error(exc)
        else:
            gevent.get_hub().handle_error(call, *sys.exc_info())

    def spawn(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hub = gevent.get_hub()
        scheduler = gevent.getcurrent()
        if scheduler is hub:  # nothing to come back to: start it the usual way
            return super().spawn(func, *args, **kwargs)
        self._semaphore.acquire()  # the in-flight cap: waits for room, like Pool.spawn
        task = (func, args, kwargs)
        # Back here on the loop's next turn (whether or not the call waited); meanwhile the
        # call runs until its first wait, then the loop carries on.
        hub.loop.run_callback(scheduler.switch)
        if self._parked:
            call = self._parked.pop()
            self._track(call)
            call.switch(task)
        else:  # a new greenlet: its first call is its argument
            call = self.greenlet_class(self._serve, task)
            self._track(call)
            call.switch()
        return call

    def _serve(self, task: _Task) -> None:
        """A greenlet's body: each call it is given, then parked until the next one."""
        me = gevent.getcurrent()
        hub = gevent.get_hub()
        while True:
            func, args, kwargs = task
            try:
                func(*args, **kwargs)
            except Exception as exc:  # reported; the next call runs
                self._failed(me, exc)
            finally:
                self._ended(me)
            self._parked.append(me)
            task = hub.switch()  # the next call, given by spawn (GreenletExit on kill)

    def _track(self, call: Any) -> None:
        self.greenlets.add(call)
        self._empty_event.clear()

    def _ended(self, call: Any) -> None:
        self.greenlets.discard(call)
        self.dying.discard(call)
        if not self.greenlets and not self.held:
            self._empty_event.set()
        self._semaphore.release()

    def kill(self, *args: Any, **kwargs: Any) -> None:
        """Kill the calls in flight (as :meth:`Pool.kill`) and the parked greenlets."""
        parked, self._parked = self._parked, []
        for call in parked:
            call.kill(block=False)
        super().kill(*args, **kwargs)


__all__ = ["PromptPool"]
