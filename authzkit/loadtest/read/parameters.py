"""A run's parameters (``run.json``) in words a reader knows, not the file's keys.

``rate 100000.0`` or ``sandbox True`` makes a reader translate; the page says
``open-model rate  100,000/s`` and ``sandbox started for the run  yes``. Keys this module
does not know are still shown (with spaces for underscores), so nothing is hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from authzkit.loadtest.read.units import rate


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"


def _seconds(value: Any) -> str:
    return f"{value:g} s" if isinstance(value, int | float) else str(value)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _per_second(unit: str) -> Callable[[Any], str]:
    def shown(value: Any) -> str:
        return f"{value:g} {unit}/s" if isinstance(value, int | float) else str(value)

    return shown


def _wait(value: Any) -> str:
    return "none (back to back)" if str(value) in ("0", "0.0", "") else f"{value} s"


# run.json key (nested keys dotted) -> (label, how its value reads)
LABELS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "command": ("authzkit command", str),
    "scenario": ("scenario", str),
    "user_class": ("user class", str),
    "users": ("users", _count),
    "spawn_rate": ("users started", _per_second("users")),
    "run_time": ("run time", str),
    "wait_time": ("think time per user", _wait),
    "processes": ("Locust processes on this machine", _count),
    "rate": ("open-model rate", rate),
    "arrivals": ("arrivals", str),
    "max_in_flight": ("calls in flight per process at most", _count),
    "actions.plain": ("plain action", str),
    "actions.challenge": ("challenge action", str),
    "sandbox": ("sandbox started for the run", _yes_no),
    "token_ttl": ("sandbox token lifetime", _seconds),
    "dialect": ("sandbox dialect", str),
    "host": ("service", str),
    "tls.ca_file": ("TLS: CA bundle trusted", str),
    "tls.ca_setting": ("TLS: CA bundle named by", str),
    "tls.client_certificate": ("TLS: client certificate", str),
    "tls.insecure": ("TLS: certificates NOT verified", _yes_no),
    "role": ("role", str),
    "expect_workers": ("workers expected", _count),
    "preflight.ran": ("preflight ran", _yes_no),
    "preflight.reason": ("preflight skipped because", str),
    "preflight.requests": ("preflight requests (not in the totals)", _count),
    "preflight.subjects_asked": ("preflight subjects asked", _count),
    "preflight.dropped": ("preflight dropped rows", str),
    "started_at": ("started", str),
    "finished_at": ("finished", str),
    "exit_code": ("exit code", str),
    "interrupted": ("interrupted by", str),
}


def readable(pairs: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """``(dotted key, value)`` pairs (see :func:`~authzkit.loadtest.read.sections.flatten`) as
    ``(label, value)`` a person reads; fault flags read as the sandbox's options."""
    shown = []
    for key, value in pairs:
        if key in LABELS:
            label, form = LABELS[key]
            shown.append((label, form(value)))
        elif key.startswith("faults."):
            shown.append((f"sandbox fault --{key[7:].replace('_', '-')}", str(value)))
        else:
            shown.append((key.replace("_", " ").replace(".", ": "), str(value)))
    return shown


__all__ = ["LABELS", "readable"]
