"""Which client is calling the published token endpoint, by exactly one method.

``client_secret_post``, ``client_secret_basic`` or ``private_key_jwt``; every refusal is an
:class:`OAuthError` that never repeats a secret (docs/internals.md, "Client
authentication").
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_plus

from authzkit.sandbox.clients import Client
from authzkit.sandbox.decisions import Service
from authzkit.wire import jwe
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE

_JWT_FAILED = "Client authentication with signed JWT failed: "


class OAuthError(Exception):
    """An OAuth 2.0 error response (RFC 6749 §5.2); ``basic`` adds the Basic challenge."""

    def __init__(
        self, error: str, description: str, *, status: int = 400, basic: bool = False
    ) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.basic = basic

    def body(self) -> dict[str, str]:
        """The JSON error body."""
        return {"error": self.error, "error_description": self.description}

    def headers(self) -> dict[str, str]:
        """``WWW-Authenticate: Basic`` when HTTP Basic credentials were refused."""
        return {"WWW-Authenticate": 'Basic realm="authzkit"'} if self.basic else {}


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    """``(client_id, client_secret)`` of an ``Authorization: Basic`` header (RFC 6749
    §2.3.1: each form-urlencoded), None without one; 401 when it is malformed."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        client_id, colon, secret = decoded.partition(":")
        client_id = unquote_plus(client_id, errors="strict")
        secret = unquote_plus(secret, errors="strict")
    except (binascii.Error, ValueError):
        colon = ""
    if not colon or not client_id or not secret:
        raise OAuthError(
            "invalid_client", "malformed Basic client credentials", status=401, basic=True
        )
    return client_id, secret


def _unverified_claims(assertion: str) -> dict[str, Any] | None:
    """The claims of a compact JWT before its signature is checked (to find the client)."""
    parts = assertion.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, RecursionError):
        return None
    return claims if isinstance(claims, dict) else None


class ClientAuthentication:
    """Which client is calling, by exactly one of the three methods."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def client(
        self, form: Mapping[str, str], authorization: str | None, audiences: tuple[str, ...]
    ) -> Client:
        """The authenticated client, or an :class:`OAuthError`."""
        basic = _basic_credentials(authorization)
        assertion = "client_assertion" in form or "client_assertion_type" in form
        secret = "client_secret" in form
        if (basic is not None) + assertion + secret > 1:
            raise OAuthError(
                "invalid_request",
                "use one client authentication method "
                "(client_secret_post, client_secret_basic or private_key_jwt)",
            )
        if basic is not None:
            if form.get("client_id", basic[0]) != basic[0]:
                raise OAuthError("invalid_request", "client_id differs from the Basic user")
            client = self.service.client_with_secret(*basic)
            if client is None:
                raise OAuthError(
                    "invalid_client",
                    "Invalid client or Invalid client credentials",
                    status=401,
                    basic=True,
                )
            return client
        if assertion:
            return self.asserted(form, audiences)
        if secret and "client_id" in form:
            client = self.service.client_with_secret(form["client_id"], form["client_secret"])
            if client is None:
                raise OAuthError(
                    "unauthorized_client", "INVALID_CREDENTIALS: Invalid client credentials"
                )
            return client
        raise OAuthError(
            "invalid_client",
            "no client authentication: send client_id with "
            "client_secret, HTTP Basic, or a client_assertion",
            status=401,
        )

    def asserted(self, form: Mapping[str, str], audiences: tuple[str, ...]) -> Client:
        """The client a ``private_key_jwt`` or ``client_secret_jwt`` assertion
        authenticates (RFC 7523 §3)."""
        if form.get("client_assertion_type") != CLIENT_ASSERTION_TYPE:
            raise OAuthError(
                "invalid_request", f"client_assertion_type must be {CLIENT_ASSERTION_TYPE}"
            )
        assertion = form.get("client_assertion")
        if assertion is None:
            raise OAuthError("invalid_request", "client_assertion is missing")
        peeked = _unverified_claims(assertion)
        if peeked is None:
            raise _refused("the client_assertion is not a compact JWT")
        issuer = peeked.get("iss")
        if not isinstance(issuer, str) or issuer != peeked.get("sub"):
            raise _refused("iss and sub must both be the client id")
        if form.get("client_id", issuer) != issuer:
            raise _refused("client_id differs from the assertion's iss")
        client = self.service.world.clients.get(issuer)
        if client is None:
            raise _refused("no client with this id exists")
        header = _header(assertion)
        claims = (
            _secret_verified(assertion, client)
            if header.get("alg") == jwe.SECRET_JWT_ALG
            else _key_verified(assertion, header, client)
        )
        self.check_claims(claims, client, audiences)
        return client

    def check_claims(
        self, claims: Mapping[str, Any], client: Client, audiences: tuple[str, ...]
    ) -> None:
        """``aud`` (one of ``audiences``: the issuer, the token endpoint, …), ``exp`` (on the
        sandbox clock) and a first-time ``jti``."""
        named = claims.get("aud")
        named = named if isinstance(named, list) else [named]
        if not any(isinstance(a, str) and a in audiences for a in named):
            raise _refused(
                f"aud must be the issuer {audiences[0]} or the token endpoint {audiences[1]}"
            )
        expires: Any = claims.get("exp")
        try:  # an int too large for a float is no usable time either
            expires_at = math.nan if isinstance(expires, bool) else float(expires)
        except (TypeError, ValueError, OverflowError):
            expires_at = math.nan
        if not isinstance(expires, int | float) or not math.isfinite(expires_at):
            raise _refused("exp is missing or not a number")
        if expires_at <= self.service.clock():
            raise _refused("the assertion has expired")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise _refused("jti is missing")
        if not self.service.assertions.first_use(client.client_id, jti, expires_at):
            raise _refused("Token reuse detected: this jti was used before")


def _header(assertion: str) -> dict[str, Any]:
    """A compact JWT's header; empty when unreadable (the signature check refuses it)."""
    try:
        return jwe.protected_header(assertion)
    except ConfigError:
        return {}


def _key_verified(assertion: str, header: Mapping[str, Any], client: Client) -> dict[str, Any]:
    """``private_key_jwt``: the claims an RS256 assertion signed with the client's registered
    key carries. A ``kid`` in the header must be the registered one (a string ``kid`` is
    matched exactly, as certified providers do; none means "the client's key")."""
    if client.public_key is None:
        raise _refused("no client with this id has a registered public key")
    kid = header.get("kid")
    if isinstance(kid, str) and kid != client.key_id:
        registered = f"kid {client.key_id!r}" if client.key_id else "no kid"
        raise _refused(
            f"the assertion names kid {kid[:80]!r}, but the client's registered "
            f"key has {registered}"
        )
    try:
        return jwe.verify_with_public_key(assertion, client.public_key)
    except (jwe.JoseError, ValueError, TypeError, RecursionError):
        raise _refused(
            "the signature does not verify with the client's registered key (RS256)"
        ) from None


def _secret_verified(assertion: str, client: Client) -> dict[str, Any]:
    """``client_secret_jwt``: the claims of an HS256 assertion keyed by the client secret."""
    if client.client_secret is None:
        raise _refused("the client has no secret to verify an HS256 assertion with")
    try:
        return jwe.verify_with_secret(assertion, client.client_secret)
    except (jwe.JoseError, ValueError, TypeError, RecursionError):
        raise _refused("the signature does not verify with the client secret (HS256)") from None


def _refused(why: str) -> OAuthError:
    return OAuthError("invalid_client", _JWT_FAILED + why)


__all__ = ["ClientAuthentication", "OAuthError"]
