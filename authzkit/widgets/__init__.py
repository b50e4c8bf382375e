"""Notebook widgets: challenge answer forms, and the policy explorers.

Only notebooks import this package (the ``notebooks`` extra); ``import authzkit`` never
does. Known answers and subject tokens stay in Python, never in widget state, and callbacks
never raise (docs/internals.md, "Notebook widgets").
"""

from __future__ import annotations

from authzkit.widgets.attempt import Attempt
from authzkit.widgets.authzen import AuthzenExplorer
from authzkit.widgets.closing import close_when_done
from authzkit.widgets.explorer import PolicyExplorer
from authzkit.widgets.form import ChallengeForm
from authzkit.widgets.tables import readable

__all__ = [
    "Attempt",
    "AuthzenExplorer",
    "ChallengeForm",
    "PolicyExplorer",
    "close_when_done",
    "readable",
]
