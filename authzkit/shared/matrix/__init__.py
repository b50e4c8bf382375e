"""The policy matrix: which action a subject may perform on which resource, at a glance.

The matrix's public home: the plan and its run (:mod:`.plan`), the answered table
(:mod:`.table`) and its notebook display (:mod:`.display`). Free of pandas and locust
(docs/internals.md, "The policy matrix").
"""

from __future__ import annotations

from authzkit.shared.matrix.plan import (
    NOT_ABOUT_POLICY,
    REAL_SUBJECT,
    MatrixPlan,
    ask,
    plan_matrix,
    policy_matrix,
    run_plan,
)
from authzkit.shared.matrix.table import (
    KIND_COLOURS,
    MatrixCell,
    MatrixResource,
    PolicyMatrix,
    outcome_cell,
)

__all__ = [
    "KIND_COLOURS",
    "NOT_ABOUT_POLICY",
    "REAL_SUBJECT",
    "MatrixCell",
    "MatrixPlan",
    "MatrixResource",
    "PolicyMatrix",
    "ask",
    "outcome_cell",
    "plan_matrix",
    "policy_matrix",
    "run_plan",
]
