"""The typed client: :class:`AuthzClient` and what it is built from.

The facade (``facade``) wires a transport (``transport``), the token provider (``token``,
``credentials``, ``issuer``), the key cache (``discovery``), the authorize body and its
outcomes (``authorize``, ``outcomes``, ``prepared``), answers (``answers``), the 401 and retry
policies (``unauthenticated``, ``retry``) and the record of exchanges (``exchanges``). It
imports the wire layer only, never a side. Its names resolve on first use, like ``authzkit``'s.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["AuthzClient", "EncryptedSolution"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'authzkit.client' has no attribute {name!r}")
    value = getattr(importlib.import_module("authzkit.client.facade"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from authzkit.client.facade import AuthzClient, EncryptedSolution
