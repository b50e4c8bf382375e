"""The reference sandbox: the whole API as a real local service, in the draft's dialect
(docs/wire-format.md, the default) or the provider's published one (docs/dialects.md: an
OpenID Connect token endpoint, the published bodies); see :mod:`authzkit.sandbox.dialects`.

Importing this package is light: :class:`Sandbox` (the server, the ``[sandbox]`` extra) is
imported when first named, so ``SandboxAdmin`` and the client of a sandbox running elsewhere
work with the core install alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from authzkit.sandbox.admin import SandboxAdmin
    from authzkit.sandbox.embedded import Sandbox


def __getattr__(name: str) -> Any:
    """``Sandbox`` and ``SandboxAdmin``, imported on first use (see the module's docstring:
    the sandbox's own process, the server, sends no request and imports no requests)."""
    if name == "Sandbox":
        from authzkit.sandbox.embedded import Sandbox

        return Sandbox
    if name == "SandboxAdmin":
        from authzkit.sandbox.admin import SandboxAdmin

        return SandboxAdmin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Sandbox", "SandboxAdmin"]
