"""Durations as a person reads them: the unit by magnitude, the same significant digits.

Authorization decisions take from tens of microseconds (a JWE built in-process) to seconds
(a stalled service). Whole milliseconds say nothing about the first ("0.00 ms") and many
digits hide the second, so every latency a report shows goes through :func:`duration`:
microseconds below 1 ms, milliseconds below 10 s, seconds above, three significant digits.
Data sent and received go through :func:`size` the same way.
"""

from __future__ import annotations

import math

SIGNIFICANT = 3


def _significant(value: float, digits: int = SIGNIFICANT) -> str:
    """``value`` with ``digits`` significant digits, no exponent, no trailing zeros lost
    below the point (``1.50``, ``15.0``, ``150``; ``1230`` stays whole)."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    rounded = round(value, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) > magnitude:  # 9.996 → 10.0
        decimals = max(decimals - 1, 0)
    return f"{rounded:.{decimals}f}"


def duration(microseconds: float | None) -> str:
    """A duration given in µs, e.g. ``368 µs``, ``14.3 ms``, ``1.20 s``; ``""`` when unknown."""
    if microseconds is None or (isinstance(microseconds, float) and math.isnan(microseconds)):
        return ""
    if microseconds < 1_000:
        return f"{_significant(microseconds)} µs"
    if microseconds < 10_000_000:
        return f"{_significant(microseconds / 1_000)} ms"
    return f"{_significant(microseconds / 1_000_000)} s"


def size(count: float | None) -> str:
    """Bytes as read, decimal units (as k6 shows them): ``512 B``, ``12.3 kB``, ``4.56 MB``;
    ``""`` when unknown."""
    if count is None or (isinstance(count, float) and math.isnan(count)):
        return ""
    if count < 1_000:
        return f"{count:.0f} B"
    for unit, scale in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if count < scale * 999.5 or unit == "GB":
            return f"{_significant(count / scale)} {unit}"
    return f"{count:.0f} B"  # pragma: no cover - the loop always returns


def rate(per_second: float | None) -> str:
    """A rate with three significant digits (``1,260/s``, ``315/s``, ``0.500/s``)."""
    if per_second is None or (isinstance(per_second, float) and math.isnan(per_second)):
        return ""
    if per_second >= 1_000:
        return f"{round(per_second):,}/s"
    return f"{_significant(per_second)}/s"


__all__ = ["SIGNIFICANT", "duration", "rate", "size"]
