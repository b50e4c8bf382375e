"""OAuth 2.0 error bodies (``{"error", "error_description"}``): what an OpenID Connect token
endpoint answers instead of the service's ``srn:error:*`` types.

The ``error`` code is kept as the exception's ``type``: a refusal of the token request
(RFC 6749 5.2) is a :class:`~authzkit.wire.errors.TokenRequestError`, ``invalid_token``
(RFC 6750) an :class:`~authzkit.wire.errors.AccessTokenRejectedError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authzkit.wire.errors import AccessTokenRejectedError, AuthzError, TokenRequestError

# RFC 6749 5.2 (and RFC 8707's invalid_target): the token endpoint's refusals of a request.
OAUTH_TOKEN_ERRORS = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
        "invalid_target",
    }
)


def oauth_error(status: int, body: Any, what: str) -> AuthzError | None:
    """The error of an OAuth 2.0 error body (``error`` without ``type``), else ``None``.

    A fault (5xx, 429) stays a plain :class:`AuthzError`, so it is retried like any other.
    """
    if not isinstance(body, Mapping) or "type" in body:
        return None
    code = body.get("error")
    if not isinstance(code, str) or not code:
        return None
    description = body.get("error_description")
    message = (
        f"{code}: {description}"
        if isinstance(description, str) and description
        else f"{what} failed with HTTP {status} and OAuth error {code}"
    )
    if status >= 500 or status == 429:
        cls: type[AuthzError] = AuthzError
    elif code in OAUTH_TOKEN_ERRORS:
        cls = TokenRequestError
    elif code == "invalid_token" or status == 401:
        cls = AccessTokenRejectedError
    else:
        cls = AuthzError
    return cls(message, type=code, status=status, body=body)


__all__ = ["OAUTH_TOKEN_ERRORS", "oauth_error"]
