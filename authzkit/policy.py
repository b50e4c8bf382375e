"""Deprecated: the former home of :mod:`authzkit.shared.matrix`, whose names it offers.

Importing it warns once (:mod:`authzkit.wire.deprecation` names the release that removes it).
"""

from __future__ import annotations

from authzkit.shared import matrix as _home
from authzkit.shared.matrix import *  # noqa: F403
from authzkit.wire.deprecation import deprecated

__all__ = _home.__all__

deprecated("authzkit.policy", "authzkit.shared.matrix")
