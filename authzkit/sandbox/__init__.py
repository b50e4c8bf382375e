"""The reference sandbox: the whole draft API as a real local service.

Importing this package stays light (no Starlette or uvicorn until a sandbox starts), so
``SandboxAdmin`` works in a process that only talks to a sandbox running elsewhere.
"""

from __future__ import annotations

from authzkit.sandbox.admin import SandboxAdmin
from authzkit.sandbox.server import Sandbox

__all__ = ["Sandbox", "SandboxAdmin"]
