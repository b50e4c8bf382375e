"""``authzkit capacity``: the highest arrival rate a service sustains under an SLO.

A load test whose rate is searched, in one Locust run, so it lives on the load-test side.
The face offers the search's reasoning and the reading of a capacity run, importing
neither Locust nor pandas nor matplotlib (docs/internals.md, "The capacity search").
"""

from __future__ import annotations

from authzkit.loadtest.capacity.results import is_capacity_run, read_capacity
from authzkit.loadtest.capacity.search import (
    Answer,
    Search,
    Slo,
    StepResult,
    Verdict,
    answer,
    judge,
)

__all__ = [
    "Answer",
    "Search",
    "Slo",
    "StepResult",
    "Verdict",
    "answer",
    "is_capacity_run",
    "judge",
    "read_capacity",
]
