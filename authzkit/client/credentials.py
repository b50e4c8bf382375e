"""How the client proves who it is at the token endpoint: the draft's JSON or OAuth 2.0.

The draft's JSON secret, or a form-encoded ``client_credentials`` grant with a secret, a
signed client assertion or the connection's client certificate (docs/internals.md, "Client
authentication"). Where the endpoint is: :mod:`authzkit.client.issuer`.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from authzkit.client.transport import FORM
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.errors import ConfigError
from authzkit.wire.jwe import ClientKey, sign_with_secret
from authzkit.wire.redact import Secret
from authzkit.wire.spec import (
    CLIENT_ASSERTION_TYPE,
    CLIENT_AUTH_METHODS,
    TLS_METHODS,
)
from authzkit.wire.variables import check_resource, check_scope, default_client_auth

DRAFT = "draft"
ASSERTION_METHODS = ("private_key_jwt", "client_secret_jwt")
# RFC 8705's client authentications: the client certificate on the connection is the proof.
# What proves a client's identity, by method, as the AUTHZKIT_* variable that carries it.
ASSERTION_LIFETIME = 60  # seconds: the assertion is used at once, a minute is plenty
KeySource = str | bytes | Path | Mapping[str, Any] | ClientKey


def load_client_key(source: KeySource | None, *, setting: str = "client_key") -> ClientKey | None:
    """A :class:`~authzkit.wire.jwe.ClientKey` from a PEM, a path, a JWK dict (or one already
    loaded); a :class:`ConfigError` naming ``setting`` when it is unusable."""
    if source is None or isinstance(source, ClientKey):
        return source
    return ClientKey.load(source, setting=setting)


@dataclass(frozen=True)
class TokenRequest:
    """One token call as it is sent: extra headers and the body's fields (JSON or form)."""

    headers: Mapping[str, str] = field(repr=False)
    fields: Mapping[str, str] = field(repr=False)

    def secrets(self) -> list[str]:
        """The values in this request that must never be shown (secret, assertion, Basic)."""
        found = [
            v
            for k, v in self.fields.items()
            if k in ("clientSecret", "client_secret", "client_assertion")
        ]
        basic = self.headers.get("Authorization", "")
        return found + ([basic[len("Basic ") :]] if basic.startswith("Basic ") else [])


class ClientCredentials:
    """A client application's identity and its way of proving it at the token endpoint.

    Holds the secret and the private key; neither ever shows in a repr. ``method`` is one
    of :data:`~authzkit.wire.spec.CLIENT_AUTH_METHODS` (resolve ``"draft"`` with an issuer
    through :func:`default_client_auth` first).
    """

    def __init__(
        self,
        *,
        client_id: str,
        method: str = DRAFT,
        client_secret: str | Secret | None = None,
        client_key: KeySource | None = None,
        assertion_audience: str | None = None,
        assertion_lifetime: float = ASSERTION_LIFETIME,
        clock: Clock | None = None,
        scope: str | None = None,
        resource: str | None = None,
    ) -> None:
        if method not in CLIENT_AUTH_METHODS:
            raise ConfigError(
                f"client_auth must be one of {', '.join(CLIENT_AUTH_METHODS)}, got {method!r}"
            )
        if not client_id:
            raise ConfigError("client_id is required")
        self.client_id = client_id
        self.method = method
        self._secret = Secret(client_secret) if client_secret else None
        self._key = load_client_key(client_key)
        if method == "private_key_jwt" and self._key is None:
            raise ConfigError(
                "client_auth private_key_jwt needs client_key (an RSA private "
                "key: PEM, path or JWK; AUTHZKIT_CLIENT_KEY_FILE)"
            )
        if method not in ("private_key_jwt", *TLS_METHODS) and self._secret is None:
            raise ConfigError(f"client_auth {method} needs client_secret (AUTHZKIT_CLIENT_SECRET)")
        self.assertion_audience = assertion_audience
        self.scope = check_scope("scope", scope) if scope else None
        self.resource = check_resource("resource", resource) if resource else None
        if method == DRAFT and (self.scope or self.resource):
            raise ConfigError(
                "scope and resource are OAuth 2.0 token request parameters: "
                "they need an issuer or token_url (AUTHZKIT_ISSUER, "
                "AUTHZKIT_TOKEN_URL), not the draft token path"
            )
        if not assertion_lifetime > 0:
            raise ConfigError(
                f"assertion_lifetime must be positive seconds, got {assertion_lifetime!r}"
            )
        self.assertion_lifetime = assertion_lifetime
        self._clock = clock or system_clock

    @property
    def key_id(self) -> str | None:
        """The ``kid`` of the client key (``None`` without one): what the issuer registers."""
        return self._key.kid if self._key is not None else None

    def secrets(self) -> list[Secret | None]:
        """What must be scrubbed from any text shown to a person."""
        return [self._secret]

    def assertion_facts(self, audience: str) -> str:
        """What a provider matches in this client's assertions (the ``kid`` sent, or its
        absence, and the audience), for the message of a refused ``private_key_jwt``."""
        kid = f"kid {self.key_id!r}" if self.key_id else "no kid"
        return f"the assertion carried {kid} and aud {self.audience(audience)!r}"

    def certificate_facts(self, certificate: str | None) -> str:
        """What a provider matches when it refuses a mutual-TLS client (the certificate
        shown, where it is shown, what it must be), for the message of the refusal."""
        registered = (
            "one registered in the client's jwks"
            if self.method == "self_signed_tls_client_auth"
            else "the one whose subject DN (or SAN) the client registered"
        )
        shown = f"the client certificate in {certificate}" if certificate else "no certificate"
        return (
            f"the connection offered {shown}, which a server sees only where it asks for one "
            f"(RFC 8705 §5: the token endpoint of the discovery document's "
            f"mtls_endpoint_aliases), and it must be {registered}"
        )

    def audience(self, default: str) -> str:
        """The assertion's ``aud``: ``assertion_audience`` when given, else ``default``
        (the issuer exactly as discovered, or the token endpoint)."""
        return self.assertion_audience or default

    def request(self, token_url: str, *, issuer: str | None = None) -> TokenRequest:
        """The headers and fields of one token call (a fresh assertion each time)."""
        if self.method == DRAFT:
            return TokenRequest(
                {}, {"clientId": self.client_id, "clientSecret": self._reveal_secret()}
            )
        fields = {"grant_type": "client_credentials"}
        headers: dict[str, str] = {"Content-Type": FORM}
        if self.method == "client_secret_post":
            fields.update(client_id=self.client_id, client_secret=self._reveal_secret())
        elif self.method == "client_secret_basic":
            pair = f"{quote_plus(self.client_id)}:{quote_plus(self._reveal_secret())}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif self.method in TLS_METHODS:
            fields["client_id"] = self.client_id  # RFC 8705 §2: the certificate is the proof
        else:
            fields.update(
                client_id=self.client_id,
                client_assertion_type=CLIENT_ASSERTION_TYPE,
                client_assertion=self.assertion(self.audience(issuer or token_url)),
            )
        if self.scope:
            fields["scope"] = self.scope
        if self.resource:
            fields["resource"] = self.resource
        return TokenRequest(headers, fields)

    def assertion(self, audience: str) -> str:
        """A signed RFC 7523 client assertion for ``audience`` (fresh ``jti`` every call):
        RS256 with the client key, or HS256 with the secret for ``client_secret_jwt``."""
        now = int(self._clock())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": now + int(self.assertion_lifetime),
            "jti": str(uuid.uuid4()),
        }
        if self.method == "client_secret_jwt":
            return sign_with_secret(claims, self._reveal_secret())
        if self._key is None:
            raise ConfigError("a client assertion needs client_key")
        return self._key.sign(claims)

    def _reveal_secret(self) -> str:
        if self._secret is None:
            raise ConfigError(f"client_auth {self.method} needs client_secret")
        return self._secret.reveal()

    def __repr__(self) -> str:
        return (
            f"ClientCredentials(client_id={self.client_id!r}, method={self.method!r}, "
            f"key_id={self.key_id!r})"
        )


__all__ = [
    "ASSERTION_LIFETIME",
    "ASSERTION_METHODS",
    "DRAFT",
    "TLS_METHODS",
    "ClientCredentials",
    "KeySource",
    "TokenRequest",
    "default_client_auth",
    "load_client_key",
]
