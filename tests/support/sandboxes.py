"""What the session's sandboxes are made with (see ``tests/conftest.py``)."""

from __future__ import annotations

# The published sandbox's access tokens live this long; expiry tests advance its clock past it.
PUBLISHED_TOKEN_TTL = 30

__all__ = ["PUBLISHED_TOKEN_TTL"]
