"""The published dialect's token service: an OpenID Connect (Keycloak-style) realm.

The issuer is ``{base_url}/auth/realms/authzkit``. Its discovery document sits at
``{issuer}/.well-known/openid-configuration``; its token endpoint,
``{issuer}/protocol/openid-connect/token``, takes a form-encoded ``client_credentials`` grant
with one client authentication: ``client_secret_post``, ``client_secret_basic`` (RFC 6749
§2.3.1) or ``private_key_jwt`` (RFC 7523: an RS256 assertion verified against the client's
registered public key; ``iss`` = ``sub`` = the client id, ``aud`` the issuer or the token
endpoint, ``exp`` not passed on the sandbox clock, ``jti`` never seen before).

Every failure is an OAuth 2.0 error body, never an ``srn:error:*`` and never a 5xx, whatever
the form or the assertion holds:

=====================================================  ======  =========================
failure                                                status  ``error``
=====================================================  ======  =========================
not a form, a repeated parameter, no ``grant_type``,   400     ``invalid_request``
several client authentications, a wrong
``client_assertion_type``, a body over 64 KiB
``grant_type`` other than ``client_credentials``       400     ``unsupported_grant_type``
no client authentication at all                        401     ``invalid_client``
``client_secret_basic``: malformed, unknown, wrong     401     ``invalid_client`` (with
                                                               ``WWW-Authenticate: Basic``)
``client_secret_post``: unknown client, wrong secret   400     ``unauthorized_client``
                                                               (as PROVIDER.md shows it)
``private_key_jwt``: any check of the assertion,       400     ``invalid_client``
a reused ``jti`` included                                      (Keycloak's signed-JWT path)
=====================================================  ======  =========================
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from authzkit import jwe
from authzkit.sandbox.service import Service
from authzkit.sandbox.validation import MAX_BODY_BYTES, TooLarge, declared_length, read_body
from authzkit.sandbox.world import Client
from authzkit.spec import (
    CLIENT_ASSERTION_TYPE,
    DISCOVERY_PATH,
    OIDC_CONFIGURATION_PATH,
    OIDC_TOKEN_PATH,
    SANDBOX_REALM_PATH,
)

FORM = "application/x-www-form-urlencoded"
GRANT_TYPE = "client_credentials"
TOKEN_AUTH_METHODS = ("client_secret_post", "client_secret_basic", "private_key_jwt")
SCOPE = "profile email"  # what a Keycloak realm grants a client by default
MAX_FORM_FIELDS = 64
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}  # RFC 6749 §5.1
_JWT_FAILED = "Client authentication with signed JWT failed: "
log = logging.getLogger(__name__)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


class OAuthError(Exception):
    """An OAuth 2.0 error response (RFC 6749 §5.2); ``basic`` adds the Basic challenge."""

    def __init__(self, error: str, description: str, *, status: int = 400,
                 basic: bool = False) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.basic = basic

    def response(self) -> Response:
        headers = dict(_NO_STORE)
        if self.basic:
            headers["WWW-Authenticate"] = 'Basic realm="authzkit"'
        return Response(_dumps({"error": self.error, "error_description": self.description}),
                        self.status, headers=headers, media_type="application/json")


@dataclass(frozen=True)
class Issuer:
    """The realm's addresses below one base URL (``http://host:port``)."""

    base_url: str

    @property
    def url(self) -> str:
        """The issuer URL: what an assertion's ``aud`` names."""
        return self.base_url + SANDBOX_REALM_PATH

    @property
    def token_endpoint(self) -> str:
        """The token endpoint URL (also accepted as ``aud``)."""
        return self.url + OIDC_TOKEN_PATH

    def configuration(self) -> dict[str, Any]:
        """The discovery document (the members a client-credentials client reads)."""
        return {"issuer": self.url, "token_endpoint": self.token_endpoint,
                "jwks_uri": self.base_url + DISCOVERY_PATH,
                "grant_types_supported": [GRANT_TYPE],
                "token_endpoint_auth_methods_supported": list(TOKEN_AUTH_METHODS),
                "token_endpoint_auth_signing_alg_values_supported": [jwe.JWT_ALG]}

    def seen_by(self, request: Request) -> Issuer:
        """The issuer under the host the client used (``localhost`` or ``127.0.0.1``, a
        ``0.0.0.0`` bind reached by name), as Keycloak derives it; else this one."""
        host = request.headers.get("host", "")
        return Issuer(f"http://{host}") if _HOST.fullmatch(host) else self


def parse_form(content_type: str | None, body: bytes) -> dict[str, str]:
    """A form body as ``name → value``; blank values count as omitted (RFC 6749 §3.1) and a
    repeated parameter is an ``invalid_request`` (§3.2)."""
    if (content_type or "").split(";")[0].strip().lower() != FORM:
        raise OAuthError("invalid_request", f"the body must be {FORM}")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, encoding="utf-8",
                          errors="strict", max_num_fields=MAX_FORM_FIELDS)
    except ValueError:  # not UTF-8, a bad percent-escape, or too many fields
        raise OAuthError("invalid_request", "the form cannot be decoded (UTF-8, "
                         f"at most {MAX_FORM_FIELDS} parameters)") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise OAuthError("invalid_request", f"parameter {name[:40]!r} is repeated")
        if value:
            form[name] = value
    return form


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
        raise OAuthError("invalid_client", "malformed Basic client credentials", status=401,
                         basic=True)
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

    def client(self, form: Mapping[str, str], authorization: str | None,
               issuers: tuple[Issuer, ...]) -> Client:
        """The authenticated client, or an :class:`OAuthError`."""
        basic = _basic_credentials(authorization)
        assertion = "client_assertion" in form or "client_assertion_type" in form
        secret = "client_secret" in form
        if (basic is not None) + assertion + secret > 1:
            raise OAuthError("invalid_request", "use one client authentication method "
                             "(client_secret_post, client_secret_basic or private_key_jwt)")
        if basic is not None:
            if form.get("client_id", basic[0]) != basic[0]:
                raise OAuthError("invalid_request", "client_id differs from the Basic user")
            client = self.service.client_with_secret(*basic)
            if client is None:
                raise OAuthError("invalid_client", "Invalid client or Invalid client "
                                 "credentials", status=401, basic=True)
            return client
        if assertion:
            return self.asserted(form, issuers)
        if secret and "client_id" in form:
            client = self.service.client_with_secret(form["client_id"], form["client_secret"])
            if client is None:
                raise OAuthError("unauthorized_client",
                                 "INVALID_CREDENTIALS: Invalid client credentials")
            return client
        raise OAuthError("invalid_client", "no client authentication: send client_id with "
                         "client_secret, HTTP Basic, or a client_assertion", status=401)

    def asserted(self, form: Mapping[str, str], issuers: tuple[Issuer, ...]) -> Client:
        """The client a ``private_key_jwt`` assertion authenticates (RFC 7523 §3)."""
        if form.get("client_assertion_type") != CLIENT_ASSERTION_TYPE:
            raise OAuthError("invalid_request",
                             f"client_assertion_type must be {CLIENT_ASSERTION_TYPE}")
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
        if client is None or client.public_key is None:
            raise _refused("no client with this id has a registered public key")
        try:
            claims = jwe.verify_with_public_key(assertion, client.public_key)
        except (jwe.JoseError, ValueError, TypeError, RecursionError):
            raise _refused("the signature does not verify with the client's registered "
                           "key (RS256)") from None
        self.check_claims(claims, client, issuers)
        return client

    def check_claims(self, claims: Mapping[str, Any], client: Client,
                     issuers: tuple[Issuer, ...]) -> None:
        """``aud``, ``exp`` (sandbox clock) and a first-time ``jti``."""
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        accepted = {url for issuer in issuers for url in (issuer.url, issuer.token_endpoint)}
        if not any(isinstance(a, str) and a.rstrip("/") in accepted for a in audiences):
            raise _refused(f"aud must be the issuer {issuers[0].url} or the token endpoint "
                           f"{issuers[0].token_endpoint}")
        expires = claims.get("exp")
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


def _refused(why: str) -> OAuthError:
    return OAuthError("invalid_client", _JWT_FAILED + why)


class OidcEndpoints:
    """The realm's discovery document and token endpoint."""

    def __init__(self, service: Service, issuer: Issuer) -> None:
        self.service = service
        self.issuer = issuer
        self.authentication = ClientAuthentication(service)

    async def configuration(self, request: Request) -> Response:
        """``GET {issuer}/.well-known/openid-configuration``."""
        document = self.issuer.seen_by(request).configuration()
        return Response(_dumps(document), media_type="application/json")

    async def token(self, request: Request) -> Response:
        """``POST {issuer}/protocol/openid-connect/token``: a client_credentials grant."""
        try:
            body = await read_body(request.receive, declared_length(request.headers))
            form = parse_form(request.headers.get("content-type"), body)
            grant_type = form.get("grant_type")
            if grant_type is None:
                raise OAuthError("invalid_request", "grant_type is missing")
            if grant_type != GRANT_TYPE:
                raise OAuthError("unsupported_grant_type",
                                 f"grant_type must be {GRANT_TYPE}")
            issuers = (self.issuer, self.issuer.seen_by(request))
            client = self.authentication.client(form, request.headers.get("authorization"),
                                                issuers)
            token, lifetime = self.service.grant_access_token(client)
        except OAuthError as exc:
            return exc.response()
        except TooLarge:
            return OAuthError("invalid_request",
                              f"the body is larger than {MAX_BODY_BYTES} bytes").response()
        except Exception as exc:  # the promise is "never a 5xx", even for our own bugs
            log.warning("sandbox: unexpected %s on the token endpoint", type(exc).__name__)
            return OAuthError("invalid_request", "the sandbox could not process this "
                              "request").response()
        return Response(_dumps({"access_token": token, "expires_in": lifetime,
                                    "refresh_expires_in": 0, "token_type": "bearer",
                                    "not-before-policy": 0, "scope": SCOPE}),
                        headers=_NO_STORE, media_type="application/json")


def oidc_routes(service: Service, issuer: Issuer) -> list[Route]:
    """The realm's two routes, for ``build_app``."""
    endpoints = OidcEndpoints(service, issuer)
    return [Route(SANDBOX_REALM_PATH + OIDC_CONFIGURATION_PATH, endpoints.configuration,
                  methods=["GET"]),
            Route(SANDBOX_REALM_PATH + OIDC_TOKEN_PATH, endpoints.token, methods=["POST"])]


__all__ = ["FORM", "GRANT_TYPE", "SCOPE", "TOKEN_AUTH_METHODS", "ClientAuthentication",
           "Issuer", "OAuthError", "OidcEndpoints", "oidc_routes", "parse_form"]
