"""A client application of the sandbox's world, and how it authenticates for a token.

A ``client_secret``, a registered ``public_key`` for ``private_key_jwt``, or both; a key
may be generated at start (docs/internals.md, "Client applications").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from authzkit.wire import jwe
from authzkit.wire.errors import ConfigError

CLIENT_KEY_SIZE = 2048  # a client's own signing key (private_key_jwt); RS256 needs >= 2048


@dataclass(frozen=True)
class Client:
    """A client application that may ask for access tokens; only resource servers may authorize.

    It authenticates at the token endpoint with ``client_secret``, or (published dialect,
    ``private_key_jwt``) with an assertion that ``public_key`` verifies, or either. A client
    with ``generate_key`` gets a fresh key pair when the sandbox starts; its private half
    (``client_key_pem``, a demo value like the secret) is then exposed by the sandbox.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    resource_server: bool = False
    public_key: jwe.PublicKey | None = field(default=None, repr=False, compare=False)
    client_key_pem: str | None = field(default=None, repr=False)
    generate_key: bool = False
    key_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """One entry of the world's ``clients`` (only the members this client has)."""
        entry: dict[str, Any] = {"client_id": self.client_id}
        if self.client_secret is not None:
            entry["client_secret"] = self.client_secret
        entry["resource_server"] = self.resource_server
        if self.public_key is not None:
            jwk = dict(self.public_key.jwk)
            if self.key_id is None:
                jwk.pop("kid", None)  # a kid the client never registered is not shown
            entry["public_key"] = jwk
        if self.client_key_pem is not None:
            entry["client_key_pem"] = self.client_key_pem
        elif self.generate_key:
            entry["generate_key"] = True
        return entry

    def with_generated_key(self, size: int = CLIENT_KEY_SIZE) -> Client:
        """This client with a fresh RSA key pair (``generate_key``), else itself."""
        if not self.generate_key or self.client_key_pem is not None:
            return self
        pair = jwe.KeyPair.generate(use="sig", size=size)
        return replace(
            self, public_key=pair.public_key(), client_key_pem=pair.private_pem(), key_id=pair.kid
        )


class Reader(Protocol):
    """What :func:`read_client` needs of the world reader: typed values, errors naming paths."""

    def fail(self, where: str, problem: str) -> ConfigError: ...

    def text(self, entry: Mapping[str, Any], key: str, where: str) -> str: ...

    def flag(self, entry: Mapping[str, Any], key: str, where: str) -> bool: ...


def read_client(reader: Reader, client_id: str, entry: Mapping[str, Any], where: str) -> Client:
    """A client entry of a world: a secret, a public key (JWK or PEM), a private key PEM, or
    ``generate_key = true``; at least one way to authenticate."""
    secret = reader.text(entry, "client_secret", where) if "client_secret" in entry else None
    public_key, key_id = None, None
    if "public_key" in entry:
        raw = entry["public_key"]
        if not isinstance(raw, str | Mapping):
            raise reader.fail(f"{where}.public_key", "expected a JWK object or a PEM string")
        if "d" in raw if isinstance(raw, Mapping) else "PRIVATE KEY" in raw:
            raise reader.fail(
                f"{where}.public_key",
                "holds a private key; register the "
                "public key (the private one goes in client_key_pem)",
            )
        try:
            public_key = jwe.load_public_key(raw)
        except ConfigError as exc:
            raise reader.fail(f"{where}.public_key", exc.message) from None
        named = raw.get("kid") if isinstance(raw, Mapping) else None
        key_id = named if isinstance(named, str) and named else None
    pem = reader.text(entry, "client_key_pem", where) if "client_key_pem" in entry else None
    if pem is not None:
        try:
            derived = jwe.load_public_key(
                jwe.ClientKey.load(pem.encode(), setting=f"{where}.client_key_pem").public_jwk()
            )
        except ConfigError as exc:
            raise reader.fail(f"{where}.client_key_pem", exc.message.split(": ", 1)[-1]) from None
        if public_key is not None and public_key.jwk.get("n") != derived.jwk.get("n"):
            raise reader.fail(f"{where}.public_key", "does not match client_key_pem")
        public_key = public_key or derived
    generate = reader.flag(entry, "generate_key", where)
    if secret is None and public_key is None and not generate:
        raise reader.fail(
            f"{where}.client_secret",
            "expected a non-empty string (missing; "
            "or give the client a public_key, or generate_key = true)",
        )
    return Client(
        client_id,
        secret,
        reader.flag(entry, "resource_server", where),
        public_key,
        pem,
        generate,
        key_id,
    )


__all__ = ["CLIENT_KEY_SIZE", "Client", "Reader", "read_client"]
