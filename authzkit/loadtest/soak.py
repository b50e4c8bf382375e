"""``authzkit loadtest --soak``: an endurance run a person can just start.

The open model at :data:`SOAK_RATE` for :data:`SOAK_RUN_TIME`, drift judged, resources
sampled, short tokens and key rotations on the sandbox started here; the command line's own
options win (docs/internals.md, "An endurance run").
"""

from __future__ import annotations

import argparse
from typing import Any

SOAK_RUN_TIME = "30m"
SOAK_RATE = 50.0
SOAK_MAX_DRIFT = 1.5
SOAK_MAX_FAILURE_DRIFT = 1.0
SOAK_TOKEN_TTL = 60  # seconds: 30 lifetimes in 30 minutes
SOAK_ROTATE_KEYS_EVERY = 300.0  # seconds: 6 rotations in 30 minutes


class RunTimeGiven(argparse.Action):
    """``-t``: stores the run time and notes that it was given (``--soak`` keeps it)."""

    def __call__(
        self, parser: Any, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.run_time_given = True


def soak_presets(args: argparse.Namespace, *, sandbox: bool) -> dict[str, Any]:
    """What ``--soak`` presets that the command line left unset, by option ``dest`` (the
    sandbox's share only when ``sandbox``: one is started here); empty without ``--soak``.
    The parsed options are left as they are: the run's plan takes these on top."""
    if not getattr(args, "soak", False):
        return {}
    chosen: dict[str, Any] = {
        "max_drift": SOAK_MAX_DRIFT,
        "max_failure_drift": SOAK_MAX_FAILURE_DRIFT,
        "rate": SOAK_RATE,
    }
    if sandbox:
        chosen.update(token_ttl=SOAK_TOKEN_TTL, rotate_keys_every=SOAK_ROTATE_KEYS_EVERY)
    presets: dict[str, Any] = {}
    if not getattr(args, "run_time_given", False):
        presets["run_time"] = SOAK_RUN_TIME
    presets.update({k: v for k, v in chosen.items() if getattr(args, k, None) is None})
    return presets


def soak_words(presets: dict[str, Any]) -> list[str]:
    """The presets as options, in the order they were chosen: ``-t 30m``, ``--rate 50``."""
    return [
        f"-t {value}" if dest == "run_time" else f"--{dest.replace('_', '-')} {value:g}"
        for dest, value in presets.items()
    ]


__all__ = [
    "SOAK_MAX_DRIFT",
    "SOAK_MAX_FAILURE_DRIFT",
    "SOAK_RATE",
    "SOAK_ROTATE_KEYS_EVERY",
    "SOAK_RUN_TIME",
    "SOAK_TOKEN_TTL",
    "RunTimeGiven",
    "soak_presets",
    "soak_words",
]
