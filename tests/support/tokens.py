"""Tokens from the session's sandboxes, fetched as a resource server would (``requests``
only), and the paths they live at."""

from __future__ import annotations

import uuid
from typing import Any

import requests

from authzkit.wire import jwe
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE, OIDC_TOKEN_PATH, SANDBOX_REALM_PATH

TOKEN_PATH = "/api/v3.1/oauth/tokens"
KEYS_PATH = "/api/v1/discovery/keys"
AUTHORIZE_PATH = "/resources/v1/authorization/actions/authorize"
OIDC_TOKEN = SANDBOX_REALM_PATH + OIDC_TOKEN_PATH
OIDC_CONFIGURATION = SANDBOX_REALM_PATH + "/.well-known/openid-configuration"


def client_assertion(sandbox: Any, **claims: Any) -> str:
    """A fresh, valid private_key_jwt assertion of the demo client; ``claims`` override."""
    now = int(sandbox.clock())
    base = {
        "iss": sandbox.client_id,
        "sub": sandbox.client_id,
        "aud": sandbox.issuer,
        "iat": now,
        "nbf": now,
        "exp": now + 60,
        "jti": str(uuid.uuid4()),
    }
    return jwe.ClientKey.load(sandbox.client_key_pem).sign({**base, **claims})


def assertion_form(sandbox: Any, **claims: Any) -> dict[str, str]:
    """The token endpoint's form for a private_key_jwt grant."""
    return {
        "grant_type": "client_credentials",
        "client_assertion_type": CLIENT_ASSERTION_TYPE,
        "client_assertion": client_assertion(sandbox, **claims),
    }


def fetch_published_access_token(sandbox: Any) -> str:
    """An access token from the published issuer, as a resource server gets it."""
    response = requests.post(
        sandbox.base_url + OIDC_TOKEN, data=assertion_form(sandbox), timeout=10
    )
    response.raise_for_status()
    return response.json()["access_token"]


def fetch_access_token(base_url: str, client_id: str, client_secret: str) -> str:
    """An access token from the token endpoint, as a resource server would get it."""
    response = requests.post(
        f"{base_url}{TOKEN_PATH}",
        timeout=10,
        json={"clientId": client_id, "clientSecret": client_secret},
    )
    response.raise_for_status()
    return response.json()["accessToken"]


__all__ = [
    "AUTHORIZE_PATH",
    "KEYS_PATH",
    "OIDC_CONFIGURATION",
    "OIDC_TOKEN",
    "TOKEN_PATH",
    "assertion_form",
    "client_assertion",
    "fetch_access_token",
    "fetch_published_access_token",
]
