"""Wire facts of the draft (docs/wire-format.md) that the client, the sandbox, the CLI and
the load tests share.

Each fact is written once, here: the three endpoint paths, the default resource type, the
credential kinds a challenge may ask for, the ``challenge_required`` type, and how the
service's error ``type`` is read from a body (top level, or inside ``challenge`` as the
provider's published examples show). Nothing here imports more than the standard library,
so every side of the product can depend on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AUTHORIZE_PATH = "/resources/v1/authorization/actions/authorize"
DISCOVERY_PATH = "/api/v1/discovery/keys"
TOKEN_PATH = "/api/v3.1/oauth/tokens"

DEFAULT_RESOURCE_TYPE = "srn:resource:account"
RESOURCE_TYPE_PREFIX = "srn:resource:"
CREDENTIAL_KINDS = ("pin", "login_password", "totp")
CHALLENGE_REQUIRED = "srn:error:challenge_required"

# The dialects of the service's authorize API (token endpoint, challenges, JWE): its draft
# (the default) and what the provider publishes (docs/dialects.md): an OpenID Connect
# token endpoint, bodies with "nil", bare 401s. Flows, checks and load tests of that API
# run on these only.
AUTHORIZE_DIALECTS = ("draft", "published")
# The OpenID AuthZEN Authorization API 1.0: the same question, standard words, no
# challenge (its wire facts: :mod:`authzkit.wire.authzen`).
AUTHZEN = "authzen"
# Every dialect a client and a sandbox speak.
DIALECTS = (*AUTHORIZE_DIALECTS, AUTHZEN)
# How the client authenticates at the token endpoint: the draft's JSON body, or OAuth 2.0
# client credentials (form-encoded) with one of RFC 6749/7523's client authentications, or
# RFC 8705's mutual TLS (the client certificate shown on the connection proves who it is).
CLIENT_AUTH_METHODS = (
    "draft",
    "client_secret_post",
    "client_secret_basic",
    "client_secret_jwt",
    "private_key_jwt",
    "tls_client_auth",
    "self_signed_tls_client_auth",
)
# RFC 8705: the client certificate shown on the connection proves the client.
TLS_METHODS = ("tls_client_auth", "self_signed_tls_client_auth")
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
OIDC_CONFIGURATION_PATH = "/.well-known/openid-configuration"  # below an issuer URL
OIDC_TOKEN_PATH = "/protocol/openid-connect/token"  # below a Keycloak-style realm issuer
SANDBOX_REALM_PATH = "/auth/realms/authzkit"  # the published-dialect sandbox's issuer path
SANDBOX_WORLD_PATH = "/sandbox/v1/world"
# The member of a sandbox's world document that says "an authzkit sandbox" (version, dialect,
# issuer): a service that has it is a sandbox, with no person behind its subjects.
SANDBOX_IDENTITY = "authzkit_sandbox"
UNAUTHENTICATED = "srn:error:unauthenticated"

# RSA sizes of the encryption key a sandbox may generate (the provider's is 4096).
KEY_SIZES = (2048, 3072, 4096)
DEFAULT_KEY_SIZE = 4096

# The actions of authzkit's default sandbox world; a real environment names its own.
DEFAULT_PLAIN_ACTION = "show_account_balance_public"
DEFAULT_CHALLENGE_ACTION = "transfer_funds"


def error_type(body: Any) -> str | None:
    """The service's ``type`` string of a parsed body: at the top level, else inside
    ``challenge``; ``None`` when the body names none (a success, or not JSON)."""
    if body.__class__ is not dict and not isinstance(body, Mapping):
        return None
    found = body.get("type")
    if found.__class__ is str and found:
        return found
    challenge = body.get("challenge")
    if challenge.__class__ is dict or isinstance(challenge, Mapping):
        inner = challenge.get("type")
        if inner.__class__ is str and inner:
            return inner
    return None


def is_challenge(body: Any) -> bool:
    """True when a 403 body demands a challenge (type at the top level or in ``challenge``)."""
    if body.__class__ is not dict and not isinstance(body, Mapping):
        return False
    if body.get("type") == CHALLENGE_REQUIRED:
        return True
    challenge = body.get("challenge")
    return isinstance(challenge, Mapping) and challenge.get("type") == CHALLENGE_REQUIRED


__all__ = [
    "AUTHORIZE_DIALECTS",
    "AUTHORIZE_PATH",
    "AUTHZEN",
    "CHALLENGE_REQUIRED",
    "CLIENT_ASSERTION_TYPE",
    "CLIENT_AUTH_METHODS",
    "CREDENTIAL_KINDS",
    "DEFAULT_CHALLENGE_ACTION",
    "DEFAULT_KEY_SIZE",
    "DEFAULT_PLAIN_ACTION",
    "DEFAULT_RESOURCE_TYPE",
    "DIALECTS",
    "DISCOVERY_PATH",
    "KEY_SIZES",
    "OIDC_CONFIGURATION_PATH",
    "OIDC_TOKEN_PATH",
    "RESOURCE_TYPE_PREFIX",
    "SANDBOX_IDENTITY",
    "SANDBOX_REALM_PATH",
    "SANDBOX_WORLD_PATH",
    "TLS_METHODS",
    "TOKEN_PATH",
    "UNAUTHENTICATED",
    "error_type",
    "is_challenge",
]
