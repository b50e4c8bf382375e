"""The compact serialization JWE and JWS share: the algorithms accepted, base64url
segments, the protected header, and the decoding failures the sandbox tells apart.

The failures (:class:`JoseError` and its subclasses) never leave the package: the sandbox
turns them into its error answers.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from authzkit.wire.errors import ConfigError

DEFAULT_ALG = "RSA-OAEP-256"
DEFAULT_ENC = "A256GCM"
KEY_ALGS = ("RSA-OAEP-256", "RSA-OAEP")
CONTENT_ENCS = ("A256GCM",)
JWT_ALG = "RS256"
SECRET_JWT_ALG = "HS256"  # client_secret_jwt


class JoseError(Exception):
    """Base of the sandbox-side decoding failures below (never leaves the package)."""


class MalformedJwe(JoseError):
    """Not a compact JWE we accept (garbage, wrong alg/enc, undecryptable content)."""


class UnknownKey(JoseError):
    """The JWE names a kid we do not hold, or our key cannot unwrap it."""


class InvalidJwt(JoseError):
    """The JWT is malformed or its signature does not verify."""


def b64url_decode(segment: str) -> bytes:
    """One base64url segment of a compact token (padding restored)."""
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def b64url_encode(data: bytes) -> str:
    """``data`` as one unpadded base64url segment."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def protected_header(compact: str) -> dict[str, Any]:
    """The decoded protected header of a compact JWE or JWS (no key needed); anything else
    is a :class:`~authzkit.wire.errors.ConfigError` saying what is wrong with it."""
    try:
        return decoded_header(compact)
    except MalformedJwe as exc:
        raise ConfigError(f"not a compact JWE: {exc}") from None


def decoded_header(compact: str) -> dict[str, Any]:
    """The protected header, or :class:`MalformedJwe` (the sandbox's decoding failure)."""
    if not isinstance(compact, str):
        raise MalformedJwe(
            f"expected the compact serialization (a str), got {type(compact).__name__}"
        )
    try:
        header = json.loads(b64url_decode(compact.split(".", 1)[0]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJwe("the protected header is not base64url JSON") from exc
    if not isinstance(header, dict):
        raise MalformedJwe("the protected header is not a JSON object")
    return header


__all__ = [
    "CONTENT_ENCS",
    "DEFAULT_ALG",
    "DEFAULT_ENC",
    "JWT_ALG",
    "KEY_ALGS",
    "SECRET_JWT_ALG",
    "InvalidJwt",
    "JoseError",
    "MalformedJwe",
    "UnknownKey",
    "b64url_decode",
    "b64url_encode",
    "decoded_header",
    "protected_header",
]
