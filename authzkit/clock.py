"""Deprecated: the former home of :mod:`authzkit.wire.clock`, whose names it offers.

Importing it warns once (:mod:`authzkit.wire.deprecation` names the release that removes it).
"""

from __future__ import annotations

from authzkit.wire import clock as _home
from authzkit.wire.clock import *  # noqa: F403
from authzkit.wire.deprecation import deprecated

__all__ = _home.__all__

deprecated("authzkit.clock", "authzkit.wire.clock")
