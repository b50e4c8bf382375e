"""``authzkit check``: which rows of SPEC hold on an environment, with evidence.

Each row has a stable id (``token.fields``, ``challenge.single_use`` …), cites its SPEC
section and ends ``pass``, ``diff`` (works as the provider's published dialect, not the
draft), ``fail`` or ``skip``. See :func:`run_checks`.
"""

from __future__ import annotations

from authzkit.check.results import VERDICTS, CheckReport, CheckRow, Evidence
from authzkit.check.runner import ROW_IDS, run_checks

__all__ = ["ROW_IDS", "VERDICTS", "CheckReport", "CheckRow", "Evidence", "run_checks"]
