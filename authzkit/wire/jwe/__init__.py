"""The JOSE boundary: the only package that imports jwcrypto.

Challenge solutions as JWE, access tokens and client assertions as JWT; every library
exception is translated here, so nothing above sees one. Import from here (``from
authzkit.wire.jwe import KeyPair``); the modules behind it: docs/internals.md, "JOSE".
"""

from __future__ import annotations

from authzkit.wire.jwe.compact import (
    CONTENT_ENCS,
    DEFAULT_ALG,
    DEFAULT_ENC,
    JWT_ALG,
    KEY_ALGS,
    SECRET_JWT_ALG,
    InvalidJwt,
    JoseError,
    MalformedJwe,
    UnknownKey,
    protected_header,
)
from authzkit.wire.jwe.encryption import decrypt, encrypt
from authzkit.wire.jwe.keys import ClientKey, KeyPair, PublicKey, load_public_key, raw_is_jwk
from authzkit.wire.jwe.signing import (
    sign_jwt,
    sign_with_secret,
    verify_jwt,
    verify_with_public_key,
    verify_with_secret,
)

__all__ = [
    "CONTENT_ENCS",
    "DEFAULT_ALG",
    "DEFAULT_ENC",
    "JWT_ALG",
    "KEY_ALGS",
    "SECRET_JWT_ALG",
    "ClientKey",
    "InvalidJwt",
    "JoseError",
    "KeyPair",
    "MalformedJwe",
    "PublicKey",
    "UnknownKey",
    "decrypt",
    "encrypt",
    "load_public_key",
    "protected_header",
    "raw_is_jwk",
    "sign_jwt",
    "sign_with_secret",
    "verify_jwt",
    "verify_with_public_key",
    "verify_with_secret",
]
