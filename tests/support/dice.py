"""What a seeded ``--error-rate`` injects, whatever the run's speed.

The sandbox draws one 503 decision per request it receives on a faulted endpoint (token,
keys, authorize), in arrival order (:class:`~authzkit.sandbox.injector.ErrorDice`): the
first ``n`` requests get exactly the 503s of the seed's first ``n`` draws, whichever endpoint
each one went to. How many requests a short run makes is luck; what they drew is not.
"""

from __future__ import annotations

from authzkit.sandbox.injector import ErrorDice


def drawn_503s(rate: float, seed: int, requests: int) -> int:
    """How many of the first ``requests`` draws of ``seed`` answer 503."""
    dice = ErrorDice(rate, seed)
    return sum(dice.roll() for _ in range(requests))


def first_503(rate: float, seed: int) -> int:
    """The 0-based arrival index of the first request ``seed`` answers 503."""
    dice = ErrorDice(rate, seed)
    index = 0
    while not dice.roll():
        index += 1
    return index
