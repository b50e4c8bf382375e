"""``authzkit capacity``: the highest arrival rate a service sustains under an SLO.

A load test whose rate is searched: it runs the load test's Locust process (one run for the
whole search, the rate changed in place: :mod:`authzkit.loadtest.record.schedule`'s
``SteppedRate``), its options and its run directory, so it lives in the load-test side.

Inside: ``arguments`` (its options, those shared with ``authzkit loadtest`` added from their
one definition), ``search`` (judging a step, the next rate, the answer: free of processes
and time), ``channel`` (announcing steps to the run, reading back their tallies),
``results`` (``capacity.json``), ``output`` (the lines, the exit code), ``page``
(``report.html``), ``command`` (the command). The face offers the search's reasoning and the
reading of a capacity run; importing it imports neither Locust nor pandas nor matplotlib.
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
