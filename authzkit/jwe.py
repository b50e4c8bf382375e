"""The JOSE boundary: the only module that imports jwcrypto.

The client encrypts challenge solutions here with jwcrypto (compact JWE, RSA-OAEP-256 or
RSA-OAEP with A256GCM, ``kid`` in the protected header); the sandbox decrypts them and signs
and verifies its RS256 JWTs here, with the ``cryptography`` primitives jwcrypto itself is
built on (see :func:`decrypt` for why). Every library exception is translated in this one
place, so nothing above ever sees one.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature as _InvalidSignature
from cryptography.exceptions import InvalidTag as _InvalidTag
from cryptography.hazmat.primitives import hashes as _hashes
from cryptography.hazmat.primitives import serialization as _serialization
from cryptography.hazmat.primitives.asymmetric import padding as _padding
from cryptography.hazmat.primitives.asymmetric import rsa as _rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _AESGCM
from jwcrypto import jwe as _jwe
from jwcrypto import jwk as _jwk
from jwcrypto import jwt as _jwt
from jwcrypto.common import JWException

from authzkit.errors import ConfigError, SolutionEncryptionError

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


@dataclass(frozen=True)
class PublicKey:
    """A parsed public key: its ``kid``, its JWK (public members only) and the parsed form."""

    kid: str
    jwk: Mapping[str, Any]
    _key: Any = field(repr=False, compare=False)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> PublicKey:
        """Parse a JWK of the discovery document; a :class:`SolutionEncryptionError` if unusable."""
        try:
            key = _jwk.JWK(**dict(jwk))
        except (JWException, ValueError, TypeError) as exc:
            raise SolutionEncryptionError(
                f"the published key {jwk.get('kid')!r} is not a usable JWK: {exc}"
            ) from exc
        if key.has_private:
            raise SolutionEncryptionError("refusing a published key that has private parts")
        kid = jwk.get("kid")
        if not isinstance(kid, str) or not kid:
            raise SolutionEncryptionError("the published key has no kid")
        return cls(kid=kid, jwk=dict(jwk), _key=key)


@dataclass(frozen=True)
class KeyPair:
    """An RSA key pair of the sandbox: private parts stay in-process, ``public`` is published.

    The private key is kept as the ``cryptography`` object it was generated as: rebuilding
    it from JWK numbers (what jwcrypto does on first use) re-validates the key, which costs
    up to a second for RSA-4096 on the first request after every start or rotation.
    """

    kid: str
    use: str
    _private: Any = field(repr=False, compare=False)
    _public_jwk: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def generate(cls, *, use: str, size: int = 4096, kid: str | None = None) -> KeyPair:
        """A fresh RSA key with a UUID kid (like the provider's real keys)."""
        kid = kid or str(uuid.uuid4())
        private = _rsa.generate_private_key(public_exponent=65537, key_size=size)
        public = _jwk.JWK.from_pyca(private.public_key()).export_public(as_dict=True)
        public.update(use=use, kid=kid, alg=DEFAULT_ALG if use == "enc" else JWT_ALG)
        return cls(kid=kid, use=use, _private=private, _public_jwk=public)

    def _private_op_key(self) -> Any:
        """The private key for the raw RSA operations (unwrap, sign)."""
        return self._private

    def public_jwk(self) -> dict[str, Any]:
        """The public members only, with ``use``, ``kid`` and ``alg`` as discovery shows them."""
        return dict(self._public_jwk)

    def public_key(self) -> PublicKey:
        return PublicKey.from_jwk(self.public_jwk())

    def private_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM (a sandbox's demo client key only)."""
        pem: bytes = self._private.private_bytes(
            _serialization.Encoding.PEM,
            _serialization.PrivateFormat.PKCS8,
            _serialization.NoEncryption(),
        )
        return pem.decode("ascii")


class ClientKey:
    """A client application's own RSA private key, for ``private_key_jwt`` (RFC 7523).

    Loaded from a PEM (str or bytes), a path to a PEM or JWK file, or a JWK dict; anything
    else — not RSA, not a private key, encrypted — is a :class:`ConfigError` naming the
    ``setting`` it came from. The key never appears in a repr.

    ``kid`` is the key file's own ``kid``, or the one given (``AUTHZKIT_CLIENT_KEY_ID``), or
    ``None``: an assertion then carries no ``kid`` at all, because a provider that matches
    ``kid`` exactly rejects one it never registered (a thumbprint included).
    """

    def __init__(self, key: Any, kid: str | None) -> None:
        self._key = key  # jwcrypto JWK with private parts
        self.kid = kid

    @classmethod
    def load(
        cls,
        source: str | bytes | Path | Mapping[str, Any],
        *,
        setting: str = "client_key",
        kid: str | None = None,
        kid_setting: str = "client_key_id",
    ) -> ClientKey:
        data: Any = source
        if isinstance(source, Path) or (
            isinstance(source, str)
            and "-----BEGIN" not in source
            and not source.lstrip().startswith("{")
        ):
            try:
                data = Path(source).read_bytes()
            except OSError as exc:
                raise ConfigError(
                    f"{setting}: cannot read the key file {source}: {exc.strerror or exc}"
                ) from None
        try:
            if isinstance(data, Mapping):
                key = _jwk.JWK(**dict(data))
            else:
                raw = data.encode() if isinstance(data, str) else bytes(data)
                key = (
                    _jwk.JWK.from_json(raw.decode())
                    if raw.lstrip().startswith(b"{")
                    else _jwk.JWK.from_pem(raw)
                )
        except TypeError as exc:
            if "password" in str(exc).lower() or "encrypted" in str(exc).lower():
                raise ConfigError(
                    f"{setting}: the private key is encrypted; give an unencrypted PEM or JWK"
                ) from None
            raise ConfigError(f"{setting}: not an RSA private key in PEM or JWK form") from None
        except (JWException, ValueError, UnicodeError) as exc:
            reason = (
                "the private key is encrypted; give an unencrypted PEM or JWK"
                if ("password" in str(exc).lower() or "encrypted" in str(exc).lower())
                else "not an RSA private key in PEM or JWK form"
            )
            raise ConfigError(f"{setting}: {reason}") from None
        if key.get("kty") != "RSA":
            raise ConfigError(f"{setting}: the key is {key.get('kty')}, not RSA")
        if not key.has_private:
            raise ConfigError(f"{setting}: a public key; private_key_jwt needs the private key")
        # jwcrypto names a key read from a PEM by its thumbprint: only a JWK's kid is the file's.
        own = key.get("kid") if isinstance(data, Mapping) or raw_is_jwk(data) else None
        if kid and own and kid != own:
            raise ConfigError(
                f"{setting} has kid {own!r} but {kid_setting} is {kid!r}; "
                f"they must agree (or leave {kid_setting} unset)"
            )
        return cls(key, str(kid or own) if (kid or own) else None)

    @property
    def thumbprint(self) -> str:
        """The RFC 7638 thumbprint of the public key (to tell keys apart in messages)."""
        return str(self._key.thumbprint())

    def public_jwk(self) -> dict[str, Any]:
        """The public members (what the client registers with the issuer), with ``kid``
        only when the key has one."""
        public: dict[str, Any] = self._key.export_public(as_dict=True)
        public.pop("kid", None)
        public.update(use="sig", alg=JWT_ALG, **({"kid": self.kid} if self.kid else {}))
        return public

    def sign(self, claims: Mapping[str, Any]) -> str:
        """A compact RS256 JWT of ``claims`` (the client assertion); ``kid`` in the header
        only when the key has one."""
        header = {"alg": JWT_ALG, "typ": "JWT", **({"kid": self.kid} if self.kid else {})}
        token = _jwt.JWT(header=header, claims=dict(claims))
        token.make_signed_token(self._key)
        signed: str = token.serialize()
        return signed

    def __repr__(self) -> str:
        return f"ClientKey(kid={self.kid!r})"


def raw_is_jwk(data: Any) -> bool:
    """True when key material read from a file or given as text is a JWK (JSON), not PEM."""
    raw = data.encode() if isinstance(data, str) else data
    return isinstance(raw, bytes) and raw.lstrip().startswith(b"{")


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
    return _jwk.JWK(kty="oct", k=_b64encode(secret.encode("utf-8")))


def load_public_key(value: str | Mapping[str, Any], *, kid: str | None = None) -> PublicKey:
    """A public RSA key from a JWK dict or a PEM string (a client's registered key); a
    :class:`ConfigError` when it is neither, or holds private parts."""
    try:
        key = (
            _jwk.JWK(**dict(value))
            if isinstance(value, Mapping)
            else _jwk.JWK.from_pem(value.encode())
        )
    except (JWException, ValueError, TypeError, UnicodeError):
        raise ConfigError("not an RSA public key in PEM or JWK form") from None
    if key.get("kty") != "RSA":
        raise ConfigError(f"the key is {key.get('kty')}, not RSA")
    public = key.export_public(as_dict=True)
    public["kid"] = (
        (value.get("kid") if isinstance(value, Mapping) else None) or kid or key.thumbprint()
    )
    return PublicKey(kid=str(public["kid"]), jwk=public, _key=_jwk.JWK(**public))


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


def _b64decode(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def protected_header(compact: str) -> dict[str, Any]:
    """The decoded protected header of a compact JWE or JWS (no key needed); anything else
    is a :class:`~authzkit.errors.ConfigError` saying what is wrong with it."""
    try:
        return _header(compact)
    except MalformedJwe as exc:
        raise ConfigError(f"not a compact JWE: {exc}") from None


def _header(compact: str) -> dict[str, Any]:
    """The protected header, or :class:`MalformedJwe` (the sandbox's decoding failure)."""
    if not isinstance(compact, str):
        raise MalformedJwe(
            f"expected the compact serialization (a str), got {type(compact).__name__}"
        )
    try:
        header = json.loads(_b64decode(compact.split(".", 1)[0]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJwe("the protected header is not base64url JSON") from exc
    if not isinstance(header, dict):
        raise MalformedJwe("the protected header is not a JSON object")
    return header


def decrypt(compact: str, private_key_for: Callable[[str], KeyPair | None]) -> bytes:
    """The plaintext of a compact JWE whose ``kid`` ``private_key_for`` resolves.

    Raises :class:`MalformedJwe` for anything that is not an acceptable compact JWE and
    :class:`UnknownKey` when the kid is unknown or the key cannot unwrap the content key.
    """
    if compact.count(".") != 4:
        raise MalformedJwe("a compact JWE has five dot-separated parts")
    header = _header(compact)
    if header.get("alg") not in KEY_ALGS or header.get("enc") not in CONTENT_ENCS:
        raise MalformedJwe("unsupported alg/enc")
    kid = header.get("kid")
    pair = private_key_for(kid) if isinstance(kid, str) else None
    if pair is None:
        raise UnknownKey("no key with that kid")
    protected_b64, encrypted_key_b64, iv_b64, ciphertext_b64, tag_b64 = compact.split(".")
    try:
        encrypted_key, iv, ciphertext, tag = (
            _b64decode(part) for part in (encrypted_key_b64, iv_b64, ciphertext_b64, tag_b64)
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


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


_PKCS1 = _padding.PKCS1v15()


def sign_jwt(claims: Mapping[str, Any], key: KeyPair) -> str:
    """A compact RS256 JWT of ``claims`` signed with ``key`` (kid in the header)."""
    header = {"alg": JWT_ALG, "typ": "JWT", "kid": key.kid}
    signing_input = ".".join(
        _b64encode(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    signature = key._private.sign(signing_input.encode("ascii"), _PKCS1, _hashes.SHA256())
    return f"{signing_input}.{_b64encode(signature)}"


def _verified_claims(compact: str, verifier_for: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """The claims of a compact RS256 JWT whose signature ``verifier_for(header)`` (a
    ``cryptography`` public key, or ``None`` to refuse) verifies; :class:`InvalidJwt` else."""
    if not isinstance(compact, str) or compact.count(".") != 2:
        raise InvalidJwt("a JWT has three dot-separated parts")
    try:
        header = _header(compact)
    except MalformedJwe as exc:
        raise InvalidJwt(str(exc)) from exc
    verifier = verifier_for(header) if header.get("alg") == JWT_ALG else None
    if verifier is None:
        raise InvalidJwt("unknown kid or alg")
    signing_input, _, signature_b64 = compact.rpartition(".")
    try:
        verifier.verify(
            _b64decode(signature_b64), signing_input.encode("ascii"), _PKCS1, _hashes.SHA256()
        )
        claims = json.loads(_b64decode(signing_input.partition(".")[2]))
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
