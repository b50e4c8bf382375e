"""Errors of the Authorization Decision Service, as one table both sides share.

The service names every failure with a ``type`` string (``srn:error:…``). This module
keeps ONE table keyed by that string: the client turns a response into the right
exception (:mod:`authzkit.wire.errors`) with :func:`error_from_response`, and the sandbox renders
the same row with :func:`error_body`, so the two can never drift apart.

An unknown ``srn:error:*`` type becomes a plain :class:`AuthzError` that keeps its string;
an OAuth 2.0 error body is read by :mod:`authzkit.wire.oauth`.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from authzkit.wire.error_display import learn_next_steps
from authzkit.wire.errors import (
    AccessTokenRejectedError,
    AuthzError,
    BadChallengeSolutionError,
    BadJweTokenError,
    BadRequestError,
    ChallengeNotFoundError,
    ChallengeRequiredError,
    ClientNotPermittedError,
    TokenRequestError,
    UnauthenticatedError,
    UnauthorizedError,
    UnexpectedResponseError,
    UnrecognizedKeyError,
    WrongChallengeSolutionError,
)
from authzkit.wire.oauth import oauth_error
from authzkit.wire.spec import error_type

SOLUTION_FIELD = "request_body.subject.context.challenge_solution"
SUBJECT_TOKEN_FIELD = "request_body.subject.token"
AUTHORIZATION_HEADER_FIELD = "headers.Authorization"

_SNIPPET_CHARS = 200


class _NotJson:
    """What a parsed body is when its bytes were not JSON (``None`` is an empty body)."""

    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()


@dataclass(frozen=True)
class ErrorKind:
    """One row of the error table: a service ``type`` and everything known about it."""

    type: str
    status: int
    field: str | None
    meaning: str
    remedy: str
    exception: builtins.type[AuthzError]  # builtins: ``type`` is a field here
    in_spec: bool = True


ERROR_KINDS: tuple[ErrorKind, ...] = (
    ErrorKind(
        "srn:error:unauthenticated",
        401,
        SUBJECT_TOKEN_FIELD,
        "The subject's session is not valid.",
        "Ask the subject to sign in again; do not retry.",
        UnauthenticatedError,
    ),
    ErrorKind(
        "srn:error:bad_jwe_token",
        403,
        SOLUTION_FIELD,
        "The JWE is invalid.",
        "Rebuild the solution as a compact JWE; do not resend the same string.",
        BadJweTokenError,
    ),
    ErrorKind(
        "srn:error:unrecognized_key",
        403,
        SOLUTION_FIELD,
        "The JWE was encrypted with the wrong key.",
        "Fetch the keys again, re-encrypt the same answer with the use=enc key, resend once.",
        UnrecognizedKeyError,
    ),
    ErrorKind(
        "srn:error:wrong_challenge_solution",
        403,
        SOLUTION_FIELD,
        "The challenge id is missing from the solution.",
        "Put challenge_id in the solution payload.",
        WrongChallengeSolutionError,
    ),
    ErrorKind(
        "srn:error:bad_challenge_solution",
        403,
        SOLUTION_FIELD,
        "The challenge answer is incorrect.",
        "Ask the subject for the credential again (attempts are limited).",
        BadChallengeSolutionError,
    ),
    ErrorKind(
        "srn:error:challenge_not_found",
        403,
        SOLUTION_FIELD,
        "The challenge id matches no existing challenge.",
        "Start over without a solution to get a fresh challenge.",
        ChallengeNotFoundError,
    ),
    ErrorKind(
        "srn:error:unauthorized",
        403,
        None,
        "The subject lacks the permission for the action.",
        "Show 'not allowed'; do not retry.",
        UnauthorizedError,
    ),
    ErrorKind(
        "srn:error:challenge_required",
        403,
        None,
        "A challenge must be solved; the body has the challenge object.",
        "Ask the subject for one of required_types, send the encrypted solution.",
        ChallengeRequiredError,
    ),
    # Readings of what the draft leaves open (the sandbox's choices, in docs/wire-format.md).
    ErrorKind(
        "srn:error:invalid_client",
        401,
        "request_body",
        "The client credentials are not valid.",
        "Check AUTHZKIT_CLIENT_ID / AUTHZKIT_CLIENT_SECRET.",
        TokenRequestError,
        False,
    ),
    ErrorKind(
        "srn:error:invalid_token",
        401,
        AUTHORIZATION_HEADER_FIELD,
        "The access token is missing, forged or expired.",
        "Fetch a new access token once and retry once.",
        AccessTokenRejectedError,
        False,
    ),
    ErrorKind(
        "srn:error:not_resource_server",
        403,
        None,
        "The client application is not flagged resource_server.",
        "Ask the provider to set the flag; use a resource_server client.",
        ClientNotPermittedError,
        False,
    ),
    ErrorKind(
        "srn:error:bad_request",
        400,
        "request_body",
        "The request body is malformed or has fields of the wrong type.",
        "Fix the field named in the error.",
        BadRequestError,
        False,
    ),
    ErrorKind(
        "srn:error:bad_authorize_request",
        403,
        "request_body",
        "The authorization request is malformed (the provider's published dialect "
        "answers 403 where the draft answers 400 srn:error:bad_request).",
        "Fix the request body; see the SPEC's request fields.",
        BadRequestError,
        False,
    ),
    ErrorKind(
        "srn:error:payload_too_large",
        413,
        "request_body",
        "The request body is larger than the service accepts.",
        "Send a smaller body.",
        BadRequestError,
        False,
    ),
    ErrorKind(
        "srn:error:not_found",
        404,
        None,
        "No endpoint at this path.",
        "Check the base URL and the path (SPEC lists every endpoint).",
        AuthzError,
        False,
    ),
    ErrorKind(
        "srn:error:method_not_allowed",
        405,
        None,
        "The endpoint does not accept this HTTP method.",
        "Use the method SPEC lists for the endpoint.",
        AuthzError,
        False,
    ),
    ErrorKind(
        "srn:error:service_unavailable",
        503,
        None,
        "The service is temporarily unavailable.",
        "Retry later with backoff (authzkit retries the token endpoint itself; it does "
        "not repeat an authorization request on its own).",
        AuthzError,
        False,
    ),
)

ERRORS: Mapping[str, ErrorKind] = {kind.type: kind for kind in ERROR_KINDS}
learn_next_steps({kind.type: kind.remedy for kind in ERROR_KINDS})  # for an error's display


def error_body(
    type_: str, *, field: str | None = None, detail: str | None = None, **extra: Any
) -> dict[str, Any]:
    """Render the JSON body for ``type_`` the way the sandbox sends it.

    ``field`` overrides the table's field (for example the exact path of a malformed
    value); ``extra`` adds keys such as ``challenge``.
    """
    kind = ERRORS[type_]
    body: dict[str, Any] = {
        "type": kind.type,
        "status": kind.status,
        "detail": detail or kind.meaning,
    }
    concerned = field if field is not None else kind.field
    if concerned:
        body["field"] = concerned
    body.update(extra)
    return body


def snippet(text: str) -> str:
    """A short one-line excerpt of a body for error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET_CHARS else flat[: _SNIPPET_CHARS - 1] + "…"


def error_from_response(
    status: int, content: bytes | str, *, what: str = "request", body: Any = None
) -> AuthzError:
    """Translate an unsuccessful HTTP answer into the matching :class:`AuthzError`.

    A JSON body with a known ``type`` gets its own class; an unknown ``type`` keeps its
    string on the base class; a body that is not JSON (a proxy's HTML page) becomes an
    :class:`UnexpectedResponseError` quoting a short snippet. ``body`` is the content
    already parsed (or :data:`NOT_JSON`), when the caller has it.
    """
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    if body is None and text:
        try:
            body = json.loads(text)
        except ValueError:
            body = NOT_JSON
    if body is NOT_JSON:
        return UnexpectedResponseError(
            f"{what} answered HTTP {status} with a body that is not JSON: {snippet(text)!r}",
            status=status,
            body=text,
        )
    oauth = oauth_error(status, body, what)
    if oauth is not None:
        return oauth
    type_ = error_type(body)
    field = body.get("field") if isinstance(body, Mapping) else None
    field = field if isinstance(field, str) else None
    detail = body.get("detail") if isinstance(body, Mapping) else None
    kind = ERRORS.get(type_) if type_ else None
    if kind is None:
        message = (
            detail
            if isinstance(detail, str) and detail
            else (f"{what} failed with HTTP {status}" + (f" and type {type_}" if type_ else ""))
        )
        if status == 401 and type_ is None:
            return AccessTokenRejectedError(message, status=status, field=field, body=body)
        return AuthzError(message, type=type_, status=status, field=field, body=body)
    message = detail if isinstance(detail, str) and detail else kind.meaning
    return kind.exception(
        message, type=kind.type, status=status, field=field or kind.field, body=body
    )


__all__ = [
    "AUTHORIZATION_HEADER_FIELD",
    "ERRORS",
    "ERROR_KINDS",
    "NOT_JSON",
    "SOLUTION_FIELD",
    "SUBJECT_TOKEN_FIELD",
    "ErrorKind",
    "error_body",
    "error_from_response",
    "snippet",
]
