"""The exceptions authzkit raises, one class per kind of failure the service names.

Which ``srn:error:*`` type becomes which class is the error table's
(:mod:`authzkit.wire.error_table`), shared by the client and the sandbox. The tree, drawn:
docs/internals.md, "Errors".
"""

from __future__ import annotations

from typing import Any


class AuthzError(Exception):
    """Base of every error authzkit raises; carries what the service said.

    ``type`` is the service's ``srn:error:…`` string (kept even when unknown), ``status``
    the HTTP status (``None`` when no answer arrived), ``field`` the request path the error
    concerns, and ``body`` the raw response body (parsed JSON, or text) for inspection.
    """

    def __init__(
        self,
        message: str,
        *,
        type: str | None = None,  # the service's own word
        status: int | None = None,
        field: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.status = status
        self.field = field
        self.body = body

    def __str__(self) -> str:
        parts = [str(self.status) if self.status is not None else None, self.type]
        prefix = " ".join(p for p in parts if p)
        text = f"[{prefix}] {self.message}" if prefix else self.message
        if self.field:
            text += f" (field: {self.field})"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(type={self.type!r}, status={self.status!r}, "
            f"field={self.field!r})"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: class, HTTP status, type, field, detail and what to do next."""
        from authzkit.wire.error_display import error_html

        return error_html(self)


class ConfigError(AuthzError, ValueError):
    """Settings or arguments are missing or malformed; the message names which."""


class TransportError(AuthzError):
    """No HTTP answer arrived (connection refused, reset, timed out)."""


class TlsError(TransportError):
    """The service answered, but TLS failed: its certificate is not trusted, is for another
    host or has expired, or it wants a client certificate. The message names the URL, what
    TLS said and the ``AUTHZKIT_TLS_*`` setting that fixes it; never "is the service up?"."""


class UnexpectedResponseError(AuthzError):
    """An answer arrived that is not the service's JSON (for example a proxy's HTML 502)."""


class SolutionEncryptionError(AuthzError):
    """The challenge solution could not be encrypted with the published key."""


class TokenRequestError(AuthzError):
    """The token endpoint refused the client credentials or kept failing."""


class AccessTokenRejectedError(AuthzError):
    """The resource server's access token was missing, forged or expired (401)."""


class ClientNotPermittedError(AuthzError):
    """The calling client application is not flagged resource_server (403)."""


class BadRequestError(AuthzError):
    """The request body was malformed, of the wrong types, or too large (4xx)."""


class UnauthenticatedError(AuthzError):
    """The subject's session token is not valid (401 ``srn:error:unauthenticated``)."""


class UnauthorizedError(AuthzError):
    """The subject lacks the permission for the action (403 ``srn:error:unauthorized``)."""


class ChallengeRequiredError(AuthzError):
    """A challenge must be solved first; raised only where a challenge was not expected."""


class ChallengeSolutionError(AuthzError):
    """The ``challenge_solution`` was refused; subclasses say why."""


class BadJweTokenError(ChallengeSolutionError):
    """The JWE is invalid."""


class UnrecognizedKeyError(ChallengeSolutionError):
    """The JWE was encrypted with the wrong key (for example a rotated one)."""


class WrongChallengeSolutionError(ChallengeSolutionError):
    """The challenge id is missing from the solution."""


class BadChallengeSolutionError(ChallengeSolutionError):
    """The challenge answer is incorrect."""


class ChallengeNotFoundError(ChallengeSolutionError):
    """The challenge id matches no existing challenge (unknown, expired, used or foreign)."""


__all__ = [
    "AccessTokenRejectedError",
    "AuthzError",
    "BadChallengeSolutionError",
    "BadJweTokenError",
    "BadRequestError",
    "ChallengeNotFoundError",
    "ChallengeRequiredError",
    "ChallengeSolutionError",
    "ClientNotPermittedError",
    "ConfigError",
    "SolutionEncryptionError",
    "TlsError",
    "TokenRequestError",
    "TransportError",
    "UnauthenticatedError",
    "UnauthorizedError",
    "UnexpectedResponseError",
    "UnrecognizedKeyError",
    "WrongChallengeSolutionError",
]
