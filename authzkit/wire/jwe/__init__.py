"""The JOSE boundary: the only package that imports jwcrypto.

The client encrypts challenge solutions here with jwcrypto (compact JWE, RSA-OAEP-256 or
RSA-OAEP with A256GCM, ``kid`` in the protected header); the sandbox decrypts them and signs
and verifies its RS256 JWTs here, with the ``cryptography`` primitives jwcrypto itself is
built on (see :func:`~authzkit.wire.jwe.encryption.decrypt` for why). Every library exception is
translated in this one place, so nothing above ever sees one.

Import from here (``from authzkit.wire.jwe import KeyPair``); the modules behind it:
``compact`` (algorithms, base64url, the protected header, the decoding failures), ``keys``
(key pairs, public keys, a client's private key; JWK and PEM loading), ``encryption``
(challenge solutions as JWE) and ``signing`` (access tokens and client assertions as JWT).
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
