"""Deprecated: the former home of :mod:`authzkit.client.exchanges`, whose names it offers
(``Recorder`` is also ``authzkit.Recorder``).

Importing it warns once (:mod:`authzkit.wire.deprecation` names the release that removes it).
"""

from __future__ import annotations

from authzkit.client import exchanges as _home
from authzkit.client.exchanges import *  # noqa: F403
from authzkit.wire.deprecation import deprecated

__all__ = _home.__all__

deprecated("authzkit.client.recorder", "authzkit.client.exchanges")
