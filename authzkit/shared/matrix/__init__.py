"""The policy matrix: which action a subject may perform on which resource, at a glance.

One plain authorize request per action x resource (never a challenge solution) and a table
of what came back: ``authorized``, ``challenge: pin`` (the kinds that would solve it),
``unauthorized``, or the other error type the service sent. Free of pandas and locust, for
``authzkit matrix`` (:mod:`authzkit.cli.matrix`), notebooks and the explorer widget:

- :mod:`~authzkit.shared.matrix.plan`: what is asked (subject, actions, resources) and
  asking it (:func:`policy_matrix`, :func:`plan_matrix`, :func:`run_plan`);
- :mod:`~authzkit.shared.matrix.table`: the answered matrix (:class:`PolicyMatrix`, its
  cells) and how it reads (an aligned text table, a pandas DataFrame, a colour per kind).
- :mod:`~authzkit.shared.matrix.display`: how the answered matrix shows in a notebook
  (its ``_repr_html_``: the outcomes tinted by kind).

Their names are offered here, the matrix's public home (``authzkit.policy``, its deprecated
former home, offers them too, with a warning).
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
