"""Fault injection's configuration: latency, deliberate 503s, a token outage, scheduled key
rotation, a periodic stop-the-world pause, and a service of known shape (an exact service
time, a bounded number of requests in service at once).

A real provider is slow at times, sheds load with 503s, loses its token service for a while,
rotates its keys on a schedule and freezes now and then (a garbage collector, a failover); a
client and a load test must be seen to survive each, and a latency measurement must be seen
to report a freeze it knows the truth of, or a service time it knows to the microsecond, or
the capacity of a service that can only serve so many at once. :class:`Faults` is what to inject
(``Sandbox(...)`` keywords, ``authzkit sandbox`` flags), validated once;
:class:`~authzkit.sandbox.injector.FaultInjector` applies it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from authzkit.wire.errors import ConfigError
from authzkit.wire.variables import parse_range


def parse_latency(value: Any) -> tuple[float, float]:
    """Milliseconds as ``(low, high)``: ``None``, ``5``, ``"5"``, ``"50-200"`` or ``(50, 200)``."""
    return parse_range("latency", value, unit="milliseconds")


def _seconds(name: str, value: Any, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (allow_none and value == 0)
    ):
        wanted = "a positive number of seconds" if allow_none else "seconds >= 0"
        raise ConfigError(f"{name} must be {wanted}, got {value!r}")
    return float(value)


def _whole(name: str, value: Any, *, unit: str, maximum: int | None = None) -> int | None:
    """``value`` as a positive whole number (None stays None); a :class:`ConfigError`
    naming ``name`` otherwise."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < 1
        or (maximum is not None and value > maximum)
    ):
        upper = f" up to {maximum:,}" if maximum is not None else ""
        raise ConfigError(f"{name} must be a whole number of {unit} >= 1{upper}, got {value!r}")
    return value


# The longest service time: what the load test's histograms can hold (60 s).
MAX_SERVICE_TIME_US = 60_000_000


def _degradation(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigError(f"degrade_ms_per_min must be milliseconds per minute >= 0, got {value!r}")
    return float(value)


def _pause(pause_every: Any, pause_ms: Any) -> tuple[float | None, float | None]:
    """Validated ``(pause_every, pause_ms)``: both None, or a period and a shorter pause."""
    every = _seconds("pause_every", pause_every, allow_none=True)
    if pause_ms is not None and (
        isinstance(pause_ms, bool)
        or not isinstance(pause_ms, int | float)
        or not math.isfinite(pause_ms)
        or pause_ms <= 0
    ):
        raise ConfigError(f"pause_ms must be a positive number of milliseconds, got {pause_ms!r}")
    if every is None and pause_ms is not None:
        raise ConfigError(
            "pause_every is required with pause_ms: the pause lasts pause_ms "
            "at the start of every pause_every seconds"
        )
    if every is not None and pause_ms is None:
        raise ConfigError(
            "pause_ms is required with pause_every: the pause lasts pause_ms "
            "at the start of every pause_every seconds"
        )
    if every is not None and pause_ms is not None and pause_ms >= every * 1000:
        raise ConfigError(
            f"pause_ms must be shorter than the period (pause_every = {every:g} "
            f"s), got {pause_ms:g} ms: the sandbox would never answer"
        )
    return every, None if pause_ms is None else float(pause_ms)


@dataclass(frozen=True)
class Faults:
    """What to inject; the default injects nothing."""

    latency_ms: tuple[float, float] = (0.0, 0.0)
    error_rate: float = 0.0
    seed: int | None = None
    token_outage: float = 0.0
    rotate_keys_every: float | None = None
    pause_every: float | None = None
    pause_ms: float | None = None
    service_time_us: int | None = None
    concurrency: int | None = None
    degrade_ms_per_min: float = 0.0

    @classmethod
    def of(
        cls,
        *,
        latency_ms: Any = None,
        error_rate: float = 0.0,
        seed: int | None = None,
        token_outage: float = 0.0,
        rotate_keys_every: float | None = None,
        pause_every: float | None = None,
        pause_ms: float | None = None,
        service_time_us: int | None = None,
        concurrency: int | None = None,
        degrade_ms_per_min: float = 0.0,
    ) -> Faults:
        """Validated settings; a :class:`ConfigError` names the bad one."""
        if (
            isinstance(error_rate, bool)
            or not isinstance(error_rate, int | float)
            or not 0 <= error_rate <= 1
        ):
            raise ConfigError(f"error_rate must be a fraction from 0 to 1, got {error_rate!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ConfigError(f"fault_seed must be a whole number, got {seed!r}")
        every, length = _pause(pause_every, pause_ms)
        return cls(
            latency_ms=parse_latency(latency_ms),
            error_rate=float(error_rate),
            seed=seed,
            token_outage=_seconds("token_outage", token_outage) or 0.0,
            rotate_keys_every=_seconds("rotate_keys_every", rotate_keys_every, allow_none=True),
            pause_every=every,
            pause_ms=length,
            service_time_us=_whole(
                "service_time_us",
                service_time_us,
                unit="microseconds",
                maximum=MAX_SERVICE_TIME_US,
            ),
            concurrency=_whole("concurrency", concurrency, unit="requests"),
            degrade_ms_per_min=_degradation(degrade_ms_per_min),
        )

    @property
    def active(self) -> bool:
        """True when anything is injected."""
        return bool(
            self.latency_ms[1]
            or self.error_rate
            or self.token_outage
            or self.rotate_keys_every
            or self.pause_every
            or self.service_time_us
            or self.concurrency
            or self.degrade_ms_per_min
        )

    def degradation_ms(self, elapsed_s: float) -> float:
        """The delay ``--degrade-ms-per-min`` adds ``elapsed_s`` seconds after start: a
        service that slows as it runs, for an endurance run's drift to find."""
        return self.degrade_ms_per_min * max(elapsed_s, 0.0) / 60.0

    def describe(self) -> str:
        """One line for the sandbox's start-up banner (``none`` when nothing is injected)."""
        low, high = self.latency_ms
        parts = []
        if high:
            parts.append(f"latency {low:g}-{high:g} ms" if low != high else f"latency {low:g} ms")
        if self.error_rate:
            seed = f" (seed {self.seed})" if self.seed is not None else ""
            parts.append(f"503 rate {self.error_rate:g}{seed}")
        if self.token_outage:
            parts.append(f"token outage for the first {self.token_outage:g} s")
        if self.rotate_keys_every:
            parts.append(f"key rotation every {self.rotate_keys_every:g} s")
        if self.pause_every:
            # .15g: a long pause reads 600000 ms, not 6e+05 ms
            parts.append(f"pause {self.pause_ms:.15g} ms every {self.pause_every:.15g} s")
        if self.service_time_us:
            parts.append(f"authorize service time {self.service_time_us:,} µs")
        if self.concurrency:
            parts.append(f"at most {self.concurrency:,} authorize requests in service at once")
        if self.degrade_ms_per_min:
            parts.append(f"every response {self.degrade_ms_per_min:g} ms slower per minute")
        return ", ".join(parts) or "none"


__all__ = ["MAX_SERVICE_TIME_US", "Faults", "parse_latency"]
