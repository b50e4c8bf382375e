"""The service's OpenAPI 3.1 document, shipped in the package as ``authzkit/openapi.json``.

Partner teams read it, the sandbox serves it at ``/openapi.json`` and the hardening tests
fuzz the sandbox from it. It is a static file so that it can be reviewed in a diff; this
module only reads it (standard library only, so ``import authzkit.openapi`` stays light).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

DOCUMENT_NAME = "openapi.json"
MEDIA_TYPE = "application/json"


@lru_cache(maxsize=1)
def openapi_bytes() -> bytes:
    """The document exactly as shipped (UTF-8 JSON), read once; what a server should send."""
    return resources.files("authzkit").joinpath(DOCUMENT_NAME).read_bytes()


def openapi_document() -> dict[str, Any]:
    """The document as a dict; a fresh copy on every call, so callers may change theirs."""
    return json.loads(openapi_bytes())


__all__ = ["DOCUMENT_NAME", "MEDIA_TYPE", "openapi_bytes", "openapi_document"]
