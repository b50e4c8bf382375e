"""Challenge solutions as compact JWE: the client encrypts (jwcrypto: RSA-OAEP-256 or
RSA-OAEP with A256GCM, ``kid`` in the protected header), the sandbox decrypts with the
``cryptography`` primitives jwcrypto is built on (see :func:`decrypt` for why).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidTag as _InvalidTag
from cryptography.hazmat.primitives import hashes as _hashes
from cryptography.hazmat.primitives.asymmetric import padding as _padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _AESGCM
from jwcrypto import jwe as _jwe
from jwcrypto.common import JWException

from authzkit.wire.errors import SolutionEncryptionError
from authzkit.wire.jwe.compact import (
    CONTENT_ENCS,
    DEFAULT_ALG,
    DEFAULT_ENC,
    KEY_ALGS,
    MalformedJwe,
    UnknownKey,
    b64url_decode,
    decoded_header,
)
from authzkit.wire.jwe.keys import KeyPair, PublicKey


def encrypt(
    key: PublicKey, payload: Mapping[str, Any], *, alg: str = DEFAULT_ALG, enc: str = DEFAULT_ENC
) -> str:
    """``payload`` as JSON in a compact JWE for ``key``; header ``alg``, ``enc``, ``kid``."""
    if alg not in KEY_ALGS:
        raise SolutionEncryptionError(f"alg must be one of {', '.join(KEY_ALGS)}, got {alg!r}")
    if enc not in CONTENT_ENCS:
        raise SolutionEncryptionError(f"enc must be one of {', '.join(CONTENT_ENCS)}, got {enc!r}")
    header = json.dumps({"alg": alg, "enc": enc, "kid": key.kid}, separators=(",", ":"))
    plaintext = json.dumps(payload, separators=(",", ":")).encode()
    try:
        token = _jwe.JWE(plaintext, protected=header)
        token.add_recipient(key._key)
        compact: str = token.serialize(compact=True)
        return compact
    except (JWException, ValueError, TypeError) as exc:
        raise SolutionEncryptionError(
            f"cannot encrypt the solution with key {key.kid}: {exc}"
        ) from exc


def decrypt(compact: str, private_key_for: Callable[[str], KeyPair | None]) -> bytes:
    """The plaintext of a compact JWE whose ``kid`` ``private_key_for`` resolves.

    Raises :class:`MalformedJwe` for anything that is not an acceptable compact JWE and
    :class:`UnknownKey` when the kid is unknown or the key cannot unwrap the content key.
    """
    if compact.count(".") != 4:
        raise MalformedJwe("a compact JWE has five dot-separated parts")
    header = decoded_header(compact)
    if header.get("alg") not in KEY_ALGS or header.get("enc") not in CONTENT_ENCS:
        raise MalformedJwe("unsupported alg/enc")
    kid = header.get("kid")
    pair = private_key_for(kid) if isinstance(kid, str) else None
    if pair is None:
        raise UnknownKey("no key with that kid")
    protected_b64, encrypted_key_b64, iv_b64, ciphertext_b64, tag_b64 = compact.split(".")
    try:
        encrypted_key, iv, ciphertext, tag = (
            b64url_decode(part) for part in (encrypted_key_b64, iv_b64, ciphertext_b64, tag_b64)
        )
    except ValueError as exc:
        raise MalformedJwe("a part is not base64url") from exc
    # Two explicit steps so that "not for this key" and "tampered content" stay apart:
    # jwcrypto substitutes a random content key when the unwrap fails (an oracle defence),
    # which makes the two indistinguishable. A sandbox must tell them apart.
    hash_alg = _hashes.SHA256() if header["alg"] == "RSA-OAEP-256" else _hashes.SHA1()
    try:
        content_key = pair._private_op_key().decrypt(
            encrypted_key, _padding.OAEP(_padding.MGF1(hash_alg), hash_alg, None)
        )
    except ValueError as exc:
        raise UnknownKey("the key cannot unwrap this JWE's content key") from exc
    if len(content_key) != 32 or len(iv) != 12 or len(tag) != 16:
        raise MalformedJwe("content key, iv or tag has the wrong length for A256GCM")
    try:
        return _AESGCM(content_key).decrypt(iv, ciphertext + tag, protected_b64.encode("ascii"))
    except (_InvalidTag, ValueError, UnicodeEncodeError) as exc:
        raise MalformedJwe("the JWE content does not decrypt") from exc


__all__ = ["decrypt", "encrypt"]
