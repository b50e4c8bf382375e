"""Deprecated: the former home of :mod:`authzkit.wire.errors`, whose names it offers.

Importing it warns once (:mod:`authzkit.wire.deprecation` names the release that removes it).
"""

from __future__ import annotations

from authzkit.wire import errors as _home
from authzkit.wire.deprecation import deprecated
from authzkit.wire.errors import *  # noqa: F403

__all__ = _home.__all__

deprecated("authzkit.errors", "authzkit.wire.errors")
