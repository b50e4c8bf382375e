"""What the fault injector and the pause count: requests seen and faults injected."""

from __future__ import annotations

from authzkit.wire.locks import LazilyLocked


class FaultCounts(LazilyLocked):
    """Requests seen and faults injected per endpoint, plus key rotations."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, name: str) -> None:
        """Add one to ``name``."""
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + 1

    def snapshot(self) -> dict[str, int]:
        """A copy: ``requests:<endpoint>``, ``delayed:<endpoint>`` (latency added),
        ``unavailable:<endpoint>``, ``token_outage``,
        ``key_rotations``, ``pauses`` (pauses that held a response), ``held:<endpoint>``."""
        with self._lock:
            return dict(self._counts)


__all__ = ["FaultCounts"]
