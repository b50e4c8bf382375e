"""How each dialect words the service's answers: the draft (docs/wire-format.md) or the
published one (docs/dialects.md).

The service decides (:mod:`authzkit.sandbox.decisions`); a dialect renders the decision.
The draft stays byte for byte what it always was (docs/internals.md, "Dialects").
"""

from __future__ import annotations

import itertools
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from starlette.exceptions import HTTPException

from authzkit.sandbox.decisions import ChallengeIssued, Refusal
from authzkit.sandbox.validation import MAX_BODY_BYTES, InvalidBody, TooLarge
from authzkit.sandbox.world import Action, World
from authzkit.wire.error_table import ERRORS, error_body
from authzkit.wire.spec import CHALLENGE_REQUIRED, UNAUTHENTICATED

BAD_REQUEST = "srn:error:bad_request"
BAD_AUTHORIZE_REQUEST = "srn:error:bad_authorize_request"
TOO_LARGE = "srn:error:payload_too_large"
INVALID_TOKEN = "srn:error:invalid_token"
ROUTING_ERRORS = {404: "srn:error:not_found", 405: "srn:error:method_not_allowed", 413: TOO_LARGE}
REQUEST_ID_KEY = "authzkit.request_id"  # where RequestIds leaves the id in the ASGI scope
NIL = "nil"  # the provider writes Go's nil as a string
log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Headers = list[tuple[bytes, bytes]]
# An authorize failure as ``(outcome counted in the stats, status, body, extra headers)``.
Answer = tuple[str, int, bytes, Headers]


def _dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=sort_keys).encode()


def _error(
    type_: str, detail: str | None = None, field: str | None = None, **extra: Any
) -> tuple[int, bytes]:
    return ERRORS[type_].status, _dumps(error_body(type_, field=field, detail=detail, **extra))


def failure(exc: BaseException, path: str) -> tuple[str, int, bytes]:
    """Any failure as ``(outcome type, status, JSON body)`` in the draft's words: the one
    exception → response mapping of the draft's endpoints and of ``/sandbox/v1/*`` (a
    refusal, a malformed or oversized body, a routing error, and our own bug, which is a
    clean 400: never a 5xx)."""
    if isinstance(exc, ChallengeIssued):
        return exc.type, *_error(exc.type, challenge=exc.challenge.to_json())
    if isinstance(exc, Refusal):
        return exc.type, *_error(exc.type, exc.detail, exc.field)
    if isinstance(exc, InvalidBody):
        return BAD_REQUEST, *_error(BAD_REQUEST, exc.detail, exc.field)
    if isinstance(exc, TooLarge):
        return TOO_LARGE, *_error(TOO_LARGE, f"the body is larger than {MAX_BODY_BYTES} bytes")
    if isinstance(exc, HTTPException):
        type_ = ROUTING_ERRORS.get(exc.status_code, BAD_REQUEST)
        return type_, *_error(type_)
    log.warning("sandbox: unexpected %s on %s", type(exc).__name__, path)
    return BAD_REQUEST, *_error(BAD_REQUEST, "the sandbox could not process this request")


def request_id(scope: Scope) -> str:
    """The id :class:`RequestIds` gave this request (a fresh one when it is not in front)."""
    found = scope.get(REQUEST_ID_KEY)
    return found if isinstance(found, str) else str(uuid.uuid4())


def _split_at_id(action: dict[str, Any], *, sort_keys: bool) -> tuple[bytes, bytes]:
    """``{"action": action, "id": …, "optional_actions": []}`` rendered once, cut where the
    id's value goes: the hot path then joins byte strings instead of encoding JSON."""
    marker = "\x00authzkit-id\x00"
    rendered = _dumps({"action": action, "id": marker, "optional_actions": []}, sort_keys=sort_keys)
    prefix, _, suffix = rendered.partition(b'"id":' + _dumps(marker))
    return prefix + b'"id":', suffix


class Dialect(Protocol):
    """What the authorize endpoint and the routing errors need from a dialect."""

    name: str

    def authorized(self, action: Action, after_challenge: bool) -> bytes:
        """The 200 body for ``action``."""

    def refused(self, exc: BaseException, scope: Scope) -> Answer:
        """Any failure of the authorize endpoint."""

    def routing_error(self, exc: HTTPException, scope: Scope) -> tuple[int, bytes]:
        """An unknown path or a wrong method."""


class DraftDialect:
    """The draft's words: shapes A and B, integer ids, ``field``/``detail`` on every error."""

    name = "draft"

    def __init__(self, world: World) -> None:
        self._ids = itertools.count(1)
        # Shape A bodies differ only in the id: render the rest once per action.
        self._shape_a = {
            name: _split_at_id(
                {"name": name, "response": None, "status": "authorized"}, sort_keys=False
            )
            for name in world.actions
        }

    def authorized(self, action: Action, after_challenge: bool) -> bytes:
        """Shape A (``id`` counts up from 1), or shape B after a solved challenge."""
        if after_challenge:
            return _dumps(
                {"action": {"name": action.name, "status": "authorized", "optional_actions": []}}
            )
        prefix, suffix = self._shape_a[action.name]
        return prefix + str(next(self._ids)).encode() + suffix

    def refused(self, exc: BaseException, scope: Scope) -> Answer:
        """The draft's error body; RFC 6750's bearer challenge only when the access token
        failed (not for the subject's session)."""
        outcome, status, payload = failure(exc, str(scope.get("path", "")))
        headers = (
            [(b"www-authenticate", b'Bearer error="invalid_token"')]
            if outcome == INVALID_TOKEN
            else []
        )
        return outcome, status, payload, headers

    def routing_error(self, exc: HTTPException, scope: Scope) -> tuple[int, bytes]:
        """``srn:error:not_found`` / ``method_not_allowed`` in the draft's error body."""
        _, status, payload = failure(exc, str(scope.get("path", "")))
        return status, payload


class PublishedDialect:
    """The published dialect's words (see the module docstring)."""

    name = "published"
    UNAUTHENTICATED_BODY = _dumps({"type": UNAUTHENTICATED})

    def __init__(self, world: World) -> None:
        self._bodies = {
            name: _split_at_id(
                {"name": name, "response": NIL, "status": "authorized"}, sort_keys=True
            )
            for name in world.actions
        }

    def authorized(self, action: Action, after_challenge: bool) -> bytes:
        """The one published 200 shape, with a fresh UUID ``id`` (after a challenge too)."""
        prefix, suffix = self._bodies[action.name]
        return b"".join((prefix, b'"', str(uuid.uuid4()).encode(), b'"', suffix))

    @staticmethod
    def error(type_: str, scope: Scope) -> tuple[int, bytes]:
        """``{"challenge": "nil", "details": {"error": …}, "id": <request id>, "type": …}``."""
        return ERRORS[type_].status, _dumps(
            {
                "challenge": NIL,
                "details": {"error": type_.removeprefix("srn:error:")},
                "id": request_id(scope),
                "type": type_,
            },
            sort_keys=True,
        )

    def refused(self, exc: BaseException, scope: Scope) -> Answer:
        """The published error bodies; the outcome keeps the service's own decision."""
        if isinstance(exc, ChallengeIssued):
            challenge = exc.challenge
            body = {
                "challenge": {"id": challenge.id, "required_types": list(challenge.required_types)},
                "details": {"error": "challenge_required"},
                "id": request_id(scope),
                "type": CHALLENGE_REQUIRED,
            }
            return exc.type, 403, _dumps(body, sort_keys=True), []
        if isinstance(exc, Refusal):
            if exc.type in (INVALID_TOKEN, UNAUTHENTICATED):
                return exc.type, 401, self.UNAUTHENTICATED_BODY, []
            return exc.type, *self.error(exc.type, scope), []
        if isinstance(exc, TooLarge):
            return TOO_LARGE, *self.error(TOO_LARGE, scope), []
        if not isinstance(exc, InvalidBody):
            log.warning("sandbox: unexpected %s on %s", type(exc).__name__, scope.get("path"))
        return BAD_AUTHORIZE_REQUEST, *self.error(BAD_AUTHORIZE_REQUEST, scope), []

    def routing_error(self, exc: HTTPException, scope: Scope) -> tuple[int, bytes]:
        """``srn:error:not_found`` / ``method_not_allowed`` in the published error body."""
        return self.error(ROUTING_ERRORS.get(exc.status_code, BAD_AUTHORIZE_REQUEST), scope)


DIALECT_CLASSES: dict[str, Callable[[World], Dialect]] = {
    DraftDialect.name: DraftDialect,
    PublishedDialect.name: PublishedDialect,
}


def dialect_for(name: str, world: World) -> Dialect:
    """The dialect called ``name`` (one of ``spec.DIALECTS``) for ``world``'s actions."""
    return DIALECT_CLASSES[name](world)


Receive = Callable[[], Awaitable[Any]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class RequestIds:
    """ASGI wrapper: a fresh UUID per HTTP request, sent as ``x-request-id`` on the response
    (whatever answers it, fault injection included) and left in the scope for error bodies."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        value = str(uuid.uuid4())
        scope[REQUEST_ID_KEY] = value
        header = (b"x-request-id", value.encode())

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        await self.app(scope, receive, send_with_id)


__all__ = [
    "BAD_AUTHORIZE_REQUEST",
    "BAD_REQUEST",
    "DIALECT_CLASSES",
    "INVALID_TOKEN",
    "NIL",
    "REQUEST_ID_KEY",
    "ROUTING_ERRORS",
    "TOO_LARGE",
    "Dialect",
    "DraftDialect",
    "PublishedDialect",
    "RequestIds",
    "dialect_for",
    "failure",
    "request_id",
]
