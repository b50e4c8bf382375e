"""The keys of both sides: the sandbox's RSA key pairs, a published public key, a client's
own private key for ``private_key_jwt``, and loading them from JWK or PEM.

Loading translates every library failure: a key that cannot be used is a
:class:`~authzkit.wire.errors.ConfigError` (a client's key or registered key) or a
:class:`~authzkit.wire.errors.SolutionEncryptionError` (a published key).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization as _serialization
from cryptography.hazmat.primitives.asymmetric import rsa as _rsa
from jwcrypto import jwk as _jwk, jwt as _jwt
from jwcrypto.common import JWException

from authzkit.wire.errors import ConfigError, SolutionEncryptionError
from authzkit.wire.jwe.compact import DEFAULT_ALG, JWT_ALG


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
        _remember_checked(hashlib.sha256(pem).digest())  # generated here: sound by making
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
                    else _from_pem(raw)
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


# SHA-256 digests of the PEMs this process has loaded with cryptography's RSA key check.
_CHECKED_PEMS: set[bytes] = set()


def _from_pem(raw: bytes) -> Any:
    """A jwcrypto JWK of a PEM private key, its RSA key checked once per PEM and process.

    cryptography checks an RSA key as it loads it (tens of milliseconds at 2048 bits, a third
    of a second at 4096), and jwcrypto would check it again when it rebuilds the key from
    the same numbers for the first signature. One check is enough: loading the same PEM
    again (each client, each settings object) costs a parse. Digests are remembered, never
    keys.
    """
    digest = hashlib.sha256(raw).digest()
    key = _jwk.JWK()
    key.unsafe_skip_rsa_key_validation = digest in _CHECKED_PEMS
    key.import_from_pem(raw)
    _remember_checked(digest)
    key.unsafe_skip_rsa_key_validation = True  # the numbers it rebuilds from were checked
    return key


def _remember_checked(digest: bytes) -> None:
    if len(_CHECKED_PEMS) >= 256:  # a bound, not an eviction policy: rechecking is only slow
        _CHECKED_PEMS.clear()
    _CHECKED_PEMS.add(digest)


def raw_is_jwk(data: Any) -> bool:
    """True when key material read from a file or given as text is a JWK (JSON), not PEM."""
    raw = data.encode() if isinstance(data, str) else data
    return isinstance(raw, bytes) and raw.lstrip().startswith(b"{")


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


__all__ = ["ClientKey", "KeyPair", "PublicKey", "load_public_key", "raw_is_jwk"]
