"""The service's OpenAPI 3.1 documents, shipped in the package, one per dialect.

Static files so that a change is reviewed in a diff; this module only reads them, with the
standard library alone so that importing it stays light (docs/internals.md, "OpenAPI
documents").
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from authzkit.wire.errors import ConfigError

DOCUMENT_NAME = "openapi.json"
DOCUMENT_NAMES = {"draft": DOCUMENT_NAME, "published": "published.openapi.json"}
MEDIA_TYPE = "application/json"


@lru_cache(maxsize=len(DOCUMENT_NAMES))
def openapi_bytes(dialect: str = "draft") -> bytes:
    """The ``dialect``'s document exactly as shipped (UTF-8 JSON), read once; what a server
    should send. A :class:`ConfigError` names the dialects for any other value."""
    name = DOCUMENT_NAMES.get(dialect)
    if name is None:
        raise ConfigError(f"dialect must be one of {', '.join(DOCUMENT_NAMES)}, got {dialect!r}")
    return resources.files("authzkit").joinpath(name).read_bytes()


def openapi_document(dialect: str = "draft") -> dict[str, Any]:
    """The document as a dict; a fresh copy on every call, so callers may change theirs."""
    document: dict[str, Any] = json.loads(openapi_bytes(dialect))
    return document


__all__ = ["DOCUMENT_NAME", "DOCUMENT_NAMES", "MEDIA_TYPE", "openapi_bytes", "openapi_document"]
