"""The reference sandbox: the whole API as a real local service, in the draft's dialect
(docs/wire-format.md, the default) or the provider's published one (docs/dialects.md: an
OpenID Connect token endpoint, the published bodies); see :mod:`authzkit.sandbox.dialects`.

Importing this package stays light (no Starlette or uvicorn until a sandbox starts), so
``SandboxAdmin`` works in a process that only talks to a sandbox running elsewhere.
"""

from __future__ import annotations

from authzkit.sandbox.admin import SandboxAdmin
from authzkit.sandbox.embedded import Sandbox

__all__ = ["Sandbox", "SandboxAdmin"]
