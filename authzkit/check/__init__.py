"""``authzkit check``: which rows of SPEC hold on an environment, with evidence.

Each row has a stable id (``token.fields``, ``challenge.single_use`` …), cites its SPEC
section and ends ``pass``, ``diff`` (works as the provider's published dialect, not the
draft), ``fail`` or ``skip``. See :func:`run_checks`. The policy matrix
(:func:`policy_matrix`) and the consent to send wrong answers (:func:`wrong_answers_allowed`)
are offered here too, for a notebook: they live in :mod:`authzkit.shared`.
"""

from __future__ import annotations

from authzkit.check.results import VERDICTS, CheckReport, CheckRow, Evidence
from authzkit.check.runner import ROW_IDS, run_checks
from authzkit.shared.consent import SKIP_MESSAGE, wrong_answers_allowed
from authzkit.shared.matrix import PolicyMatrix, policy_matrix

# The policy matrix and the consent to wrong answers live in the shared layer (the CLI's
# commands use them too); a notebook finds them here, beside the check that uses them.
__all__ = [
    "ROW_IDS",
    "SKIP_MESSAGE",
    "VERDICTS",
    "CheckReport",
    "CheckRow",
    "Evidence",
    "PolicyMatrix",
    "policy_matrix",
    "run_checks",
    "wrong_answers_allowed",
]
