"""The published dialect's token service: an OpenID Connect (Keycloak-style) realm.

Discovery document and ``client_credentials`` token endpoint under
``{base_url}/auth/realms/authzkit``; every failure an OAuth 2.0 error body, never a 5xx
(the table: docs/internals.md, "The OpenID Connect realm").
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from authzkit.sandbox.authentication import ClientAuthentication, OAuthError
from authzkit.sandbox.decisions import Service
from authzkit.sandbox.validation import MAX_BODY_BYTES, TooLarge, declared_length, read_body
from authzkit.wire import jwe
from authzkit.wire.spec import (
    DISCOVERY_PATH,
    OIDC_CONFIGURATION_PATH,
    OIDC_TOKEN_PATH,
    SANDBOX_REALM_PATH,
)

FORM = "application/x-www-form-urlencoded"
GRANT_TYPE = "client_credentials"
TOKEN_AUTH_METHODS = (
    "client_secret_post",
    "client_secret_basic",
    "client_secret_jwt",
    "private_key_jwt",
)
SCOPE = "profile email"  # what a Keycloak realm grants a client by default
MAX_FORM_FIELDS = 64
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}  # RFC 6749 §5.1
log = logging.getLogger(__name__)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _oauth_error(error: OAuthError) -> Response:
    return Response(
        _dumps(error.body()),
        error.status,
        headers={**_NO_STORE, **error.headers()},
        media_type="application/json",
    )


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
        return {
            "issuer": self.url,
            "token_endpoint": self.token_endpoint,
            "jwks_uri": self.base_url + DISCOVERY_PATH,
            "grant_types_supported": [GRANT_TYPE],
            "token_endpoint_auth_methods_supported": list(TOKEN_AUTH_METHODS),
            "token_endpoint_auth_signing_alg_values_supported": [jwe.JWT_ALG, jwe.SECRET_JWT_ALG],
        }

    def seen_by(self, request: Request) -> Issuer:
        """The issuer under the host the client used (``localhost`` or ``127.0.0.1``, a
        ``0.0.0.0`` bind reached by name), as Keycloak derives it, in this issuer's own
        scheme (an HTTPS sandbox stays HTTPS); else this one."""
        host = request.headers.get("host", "")
        scheme = self.base_url.split("://", 1)[0]
        return Issuer(f"{scheme}://{host}") if _HOST.fullmatch(host) else self


def parse_form(content_type: str | None, body: bytes) -> dict[str, str]:
    """A form body as ``name → value``; blank values count as omitted (RFC 6749 §3.1) and a
    repeated parameter is an ``invalid_request`` (§3.2)."""
    if (content_type or "").split(";")[0].strip().lower() != FORM:
        raise OAuthError("invalid_request", f"the body must be {FORM}")
    try:
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_FORM_FIELDS,
        )
    except ValueError:  # not UTF-8, a bad percent-escape, or too many fields
        raise OAuthError(
            "invalid_request",
            f"the form cannot be decoded (UTF-8, at most {MAX_FORM_FIELDS} parameters)",
        ) from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise OAuthError("invalid_request", f"parameter {name[:40]!r} is repeated")
        if value:
            form[name] = value
    return form


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
                raise OAuthError("unsupported_grant_type", f"grant_type must be {GRANT_TYPE}")
            seen = self.issuer.seen_by(request)
            audiences = (self.issuer.url, self.issuer.token_endpoint, seen.url, seen.token_endpoint)
            client = self.authentication.client(
                form, request.headers.get("authorization"), audiences
            )
            token, lifetime = self.service.grant_access_token(client)
        except OAuthError as exc:
            return _oauth_error(exc)
        except TooLarge:
            return _oauth_error(
                OAuthError("invalid_request", f"the body is larger than {MAX_BODY_BYTES} bytes")
            )
        except Exception as exc:  # the promise is "never a 5xx", even for our own bugs
            log.warning("sandbox: unexpected %s on the token endpoint", type(exc).__name__)
            return _oauth_error(
                OAuthError("invalid_request", "the sandbox could not process this request")
            )
        return Response(
            _dumps(
                {
                    "access_token": token,
                    "expires_in": lifetime,
                    "refresh_expires_in": 0,
                    "token_type": "bearer",
                    "not-before-policy": 0,
                    "scope": SCOPE,
                }
            ),
            headers=_NO_STORE,
            media_type="application/json",
        )


def oidc_routes(service: Service, issuer: Issuer) -> list[Route]:
    """The realm's two routes, for ``build_app``."""
    endpoints = OidcEndpoints(service, issuer)
    return [
        Route(
            SANDBOX_REALM_PATH + OIDC_CONFIGURATION_PATH, endpoints.configuration, methods=["GET"]
        ),
        Route(SANDBOX_REALM_PATH + OIDC_TOKEN_PATH, endpoints.token, methods=["POST"]),
    ]


__all__ = [
    "FORM",
    "GRANT_TYPE",
    "SCOPE",
    "TOKEN_AUTH_METHODS",
    "Issuer",
    "OidcEndpoints",
    "oidc_routes",
    "parse_form",
]
