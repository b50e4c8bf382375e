"""The values of the shared options, checked: numbers in a range, durations, think-time
and latency ranges, action names.

Each ``type=`` here raises :class:`argparse.ArgumentTypeError` through
:func:`argument_type`, so argparse names the option and the value in one line and exits 2;
the checks themselves (:func:`check_number`, :func:`run_time_seconds`,
:func:`parse_duration`) raise :class:`ConfigError`, for values that come from elsewhere.
"""

from __future__ import annotations

import argparse
import functools
import math
import re
from collections.abc import Callable
from typing import TypeVar

from authzkit.wire.errors import ConfigError
from authzkit.wire.variables import parse_range

T = TypeVar("T")
_DURATION = re.compile(r"^(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?$")


def argument_type(check: Callable[[str], T]) -> Callable[[str], T]:
    """``check`` as an argparse ``type=``: its :class:`ConfigError` becomes the one line
    argparse prints (a plain ValueError would print "invalid value" and lose the reason)."""

    @functools.wraps(check)
    def parse(text: str) -> T:
        try:
            return check(text)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


# -- numbers -------------------------------------------------------------------------------


def _range_words(minimum: float | None, maximum: float | None, above: float | None) -> str:
    parts = [
        f"> {above:g}" if above is not None else "",
        f">= {minimum:g}" if minimum is not None else "",
        f"<= {maximum:g}" if maximum is not None else "",
    ]
    return " and ".join(p for p in parts if p) or "finite"


def check_number(
    value: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    what: str = "a number",
) -> float:
    """``value`` when finite and in range, else a :class:`ConfigError` saying the range."""
    if (
        not math.isfinite(value)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
        or (above is not None and value <= above)
    ):
        raise ConfigError(f"must be {what} {_range_words(minimum, maximum, above)}, got {value:g}")
    return value


def number(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    what: str = "a number",
) -> Callable[[str], float]:
    """A ``type=`` for a finite float in range: ``number(above=0)`` for a rate,
    ``number(minimum=0, maximum=1)`` for a ratio."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"must be {what}, got {text!r}") from None
        return check_number(value, minimum=minimum, maximum=maximum, above=above, what=what)

    parse.__name__ = what
    return argument_type(parse)


def count(
    minimum: int = 1, *, maximum: int | None = None, also: tuple[int, ...] = ()
) -> Callable[[str], int]:
    """A ``type=`` for a whole number >= ``minimum`` (and <= ``maximum``), or one of the
    special values ``also`` (``count(1, also=(-1,))``: -1 means one per core)."""
    special = f" (or {', '.join(str(a) for a in also)})" if also else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"must be a whole number, got {text!r}") from None
        if value in also:
            return value
        if value < minimum or (maximum is not None and value > maximum):
            upper = f" and <= {maximum}" if maximum is not None else ""
            raise ConfigError(f"must be a whole number >= {minimum}{upper}{special}, got {value}")
        return value

    parse.__name__ = "count"
    return argument_type(parse)


port = count(0, maximum=65535)
port.__doc__ = "A ``type=`` for a TCP port, 0 (pick a free one) to 65535."
positive_rate = number(above=0, what="a number per second")
ratio = number(minimum=0, maximum=1, what="a ratio")
positive_seconds = number(above=0, what="a positive number of seconds")
positive_milliseconds = number(above=0, what="a positive number of milliseconds")


# -- durations and ranges ------------------------------------------------------------------


def parse_duration(text: str | int | float) -> float:
    """Locust's ``--run-time`` syntax (``90``, ``30s``, ``2m``, ``1h30m``) in seconds."""
    value = str(text).strip().lower()
    found = _DURATION.match(value) if value else None
    if not found or not any(found.groups()):
        raise ConfigError(f"run time must look like 30s, 2m or 1h30m, got {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def run_time_seconds(text: str) -> float:
    """Locust's ``--run-time`` syntax (``90``, ``30s``, ``2m``, ``1h30m``) in seconds, at
    least one: a zero run time would make locust run until killed."""
    seconds = parse_duration(text)
    if seconds < 1:
        raise ConfigError(f"must be at least 1s (like 30s, 2m or 1h30m), got {text!r}")
    return seconds


@argument_type
def run_time(text: str) -> str:
    """A ``type=`` for ``-t/--run-time``: the text as given (locust reads it), once known
    to be a positive duration."""
    run_time_seconds(text)
    return text.strip()


@argument_type
def token_ttl(text: str) -> int:
    """A ``type=`` for an access token lifetime: whole seconds >= 1, like the sandbox."""
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"must be a whole number of seconds >= 1, got {text!r}") from None
    if value < 1:
        raise ConfigError(f"must be a whole number of seconds >= 1, got {value}")
    return value


@argument_type
def wait_range(text: str) -> str:
    """A ``type=`` for ``--wait-time``: seconds (``0.5``) or a range (``0.5-2``), kept as
    text (the users parse it again in their own process)."""
    parse_range("think time", text, unit="seconds")
    return text


@argument_type
def latency_range(text: str) -> str:
    """A ``type=`` for ``--latency-ms``: milliseconds (``5``) or a range (``50-200``)."""
    parse_range("latency", text, unit="milliseconds")
    return text


@argument_type
def action_name(text: str) -> str:
    """A ``type=`` for an action name: not empty, no spaces (``transfer_funds``)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise ConfigError(f"must be an action name without spaces, got {text!r}")
    return text


__all__ = [
    "action_name",
    "argument_type",
    "check_number",
    "count",
    "latency_range",
    "number",
    "parse_duration",
    "port",
    "positive_milliseconds",
    "positive_rate",
    "positive_seconds",
    "ratio",
    "run_time",
    "run_time_seconds",
    "token_ttl",
    "wait_range",
]
