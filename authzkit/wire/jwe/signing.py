"""Signed JWTs: the sandbox's RS256 access tokens (signed and verified with its key pair),
and client assertions (RFC 7523), verified with a client's registered public key
(``private_key_jwt``) or signed and verified with its secret (``client_secret_jwt``).

Claims are never checked here: callers compare ``exp`` and the rest with their own clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature as _InvalidSignature
from cryptography.hazmat.primitives import hashes as _hashes
from cryptography.hazmat.primitives.asymmetric import padding as _padding
from jwcrypto import jwk as _jwk, jwt as _jwt
from jwcrypto.common import JWException

from authzkit.wire.jwe.compact import (
    JWT_ALG,
    SECRET_JWT_ALG,
    InvalidJwt,
    MalformedJwe,
    b64url_decode,
    b64url_encode,
    decoded_header,
)
from authzkit.wire.jwe.keys import KeyPair, PublicKey


def sign_with_secret(claims: Mapping[str, Any], secret: str) -> str:
    """A compact HS256 JWT of ``claims`` keyed by a client secret (RFC 7523's
    ``client_secret_jwt``: the secret itself never travels)."""
    token = _jwt.JWT(header={"alg": SECRET_JWT_ALG, "typ": "JWT"}, claims=dict(claims))
    token.make_signed_token(_secret_key(secret))
    signed: str = token.serialize()
    return signed


def verify_with_secret(compact: str, secret: str) -> dict[str, Any]:
    """The claims of an HS256 JWT keyed by ``secret`` (a ``client_secret_jwt`` assertion);
    :class:`InvalidJwt` for anything else. Claims are not checked here."""
    try:
        token = _jwt.JWT(
            jwt=compact, key=_secret_key(secret), algs=[SECRET_JWT_ALG], check_claims=False
        )
        claims = json.loads(token.claims)
    except (JWException, ValueError, TypeError) as exc:
        raise InvalidJwt("signature does not verify") from exc
    if not isinstance(claims, dict):
        raise InvalidJwt("claims are not a JSON object")
    return claims


def _secret_key(secret: str) -> Any:
    return _jwk.JWK(kty="oct", k=b64url_encode(secret.encode("utf-8")))


_PKCS1 = _padding.PKCS1v15()


def sign_jwt(claims: Mapping[str, Any], key: KeyPair) -> str:
    """A compact RS256 JWT of ``claims`` signed with ``key`` (kid in the header)."""
    header = {"alg": JWT_ALG, "typ": "JWT", "kid": key.kid}
    signing_input = ".".join(
        b64url_encode(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    signature = key._private.sign(signing_input.encode("ascii"), _PKCS1, _hashes.SHA256())
    return f"{signing_input}.{b64url_encode(signature)}"


def _verified_claims(compact: str, verifier_for: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """The claims of a compact RS256 JWT whose signature ``verifier_for(header)`` (a
    ``cryptography`` public key, or ``None`` to refuse) verifies; :class:`InvalidJwt` else."""
    if not isinstance(compact, str) or compact.count(".") != 2:
        raise InvalidJwt("a JWT has three dot-separated parts")
    try:
        header = decoded_header(compact)
    except MalformedJwe as exc:
        raise InvalidJwt(str(exc)) from exc
    verifier = verifier_for(header) if header.get("alg") == JWT_ALG else None
    if verifier is None:
        raise InvalidJwt("unknown kid or alg")
    signing_input, _, signature_b64 = compact.rpartition(".")
    try:
        verifier.verify(
            b64url_decode(signature_b64), signing_input.encode("ascii"), _PKCS1, _hashes.SHA256()
        )
        claims = json.loads(b64url_decode(signing_input.partition(".")[2]))
    except (_InvalidSignature, ValueError, TypeError, UnicodeError) as exc:
        raise InvalidJwt("signature does not verify") from exc
    if not isinstance(claims, dict):
        raise InvalidJwt("claims are not a JSON object")
    return claims


def verify_with_public_key(compact: str, key: PublicKey) -> dict[str, Any]:
    """The claims of an RS256 JWT signed by ``key``'s private half (a client assertion);
    :class:`InvalidJwt` for anything else. Claims are not checked here."""
    try:
        verifier = key._key.get_op_key("verify")
    except JWException as exc:
        raise InvalidJwt("the key cannot verify signatures") from exc
    return _verified_claims(compact, lambda header: verifier)


def verify_jwt(compact: str, key_for: Callable[[str], KeyPair | None]) -> dict[str, Any]:
    """The claims of a JWT whose signature verifies with the key its ``kid`` names.

    Expiry is NOT checked here: callers compare ``exp`` with their own (injectable) clock.
    """

    def verifier(header: dict[str, Any]) -> Any:
        kid = header.get("kid")
        pair = key_for(kid) if isinstance(kid, str) else None
        return pair._private.public_key() if pair is not None else None

    return _verified_claims(compact, verifier)


__all__ = [
    "sign_jwt",
    "sign_with_secret",
    "verify_jwt",
    "verify_with_public_key",
    "verify_with_secret",
]
