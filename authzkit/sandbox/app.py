"""The sandbox's HTTP face: the three SPEC endpoints plus ``/sandbox/v1/*``, as a Starlette app.

Every answer is JSON and every failure a 4xx body rendered from the one error table:
bodies over 64 KiB get 413, malformed ones 400 naming the field, and an unexpected bug a
clean 400 rather than a 5xx (a reference service that 500s teaches clients the wrong thing).
The authorize endpoint is a bare ASGI callable: it is the hot path of every load test, so
it skips the Request/Response objects the other endpoints use for readability.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from authzkit.errors import ERRORS, error_body
from authzkit.sandbox.service import ChallengeIssued, Refusal, Service
from authzkit.sandbox.validation import (
    InvalidBody,
    parse_authorize,
    parse_credentials,
    parse_json,
    parse_session,
)
from authzkit.spec import AUTHORIZE_PATH, DISCOVERY_PATH, TOKEN_PATH

MAX_BODY_BYTES = 64 * 1024

_JSON = b"application/json"
BAD_REQUEST = "srn:error:bad_request"
TOO_LARGE = "srn:error:payload_too_large"
_ROUTING_ERRORS = {404: "srn:error:not_found", 405: "srn:error:method_not_allowed",
                   413: TOO_LARGE}
log = logging.getLogger(__name__)


class TooLarge(Exception):
    """The body passed ``MAX_BODY_BYTES``."""


def _error(type_: str, detail: str | None = None, field: str | None = None,
           **extra: Any) -> tuple[int, bytes]:
    return ERRORS[type_].status, json.dumps(error_body(type_, field=field, detail=detail,
                                                       **extra)).encode()


def failure(exc: BaseException, path: str) -> tuple[str, int, bytes]:
    """Any failure as ``(outcome type, status, JSON body)``: the one exception → response
    mapping of every endpoint (a refusal, a malformed or oversized body, a routing error,
    and our own bug, which is a clean 400: never a 5xx)."""
    if isinstance(exc, ChallengeIssued):
        return exc.type, *_error(exc.type, challenge=exc.challenge.to_json())
    if isinstance(exc, Refusal):
        return exc.type, *_error(exc.type, exc.detail, exc.field)
    if isinstance(exc, InvalidBody):
        return BAD_REQUEST, *_error(BAD_REQUEST, exc.detail, exc.field)
    if isinstance(exc, TooLarge):
        return TOO_LARGE, *_error(TOO_LARGE, f"the body is larger than {MAX_BODY_BYTES} bytes")
    if isinstance(exc, HTTPException):
        type_ = _ROUTING_ERRORS.get(exc.status_code, BAD_REQUEST)
        return type_, *_error(type_)
    log.warning("sandbox: unexpected %s on %s", type(exc).__name__, path)
    return BAD_REQUEST, *_error(BAD_REQUEST, "the sandbox could not process this request")


def _declared_length(headers: Any) -> int | None:
    value = headers.get("content-length")
    return int(value) if value is not None and value.isdigit() else None


async def _read_body(receive: Receive, declared: int | None) -> bytes:
    """The whole body, refusing to buffer more than ``MAX_BODY_BYTES``."""
    if declared is not None and declared > MAX_BODY_BYTES:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TooLarge
        chunks.append(chunk)
        more = message.get("more_body", False)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class AuthorizeEndpoint:
    """SPEC endpoint 1 as a bare ASGI callable (a class, so Starlette does not wrap it)."""

    def __init__(self, service: Service) -> None:
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            raise HTTPException(405, headers={"Allow": "POST"})
        authorization: str | None = None
        declared: int | None = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"content-length":
                declared = int(value) if value.isdigit() else None
        outcome = "authorized"
        try:
            body = await _read_body(receive, declared)
            self.service.resource_server(authorization)
            status, payload = self.service.authorize(parse_authorize(parse_json(body)))
            if payload.__class__ is not bytes:
                payload = json.dumps(payload, separators=(",", ":")).encode()
        except Exception as exc:  # the promise is "never a 5xx", even for our own bugs
            outcome, status, payload = failure(exc, AUTHORIZE_PATH)
        self.service.counters.outcome(outcome)
        headers = [(b"content-type", _JSON), (b"content-length", str(len(payload)).encode())]
        if outcome == "srn:error:invalid_token":  # RFC 6750: only the access token's failure
            headers.append((b"www-authenticate", b'Bearer error="invalid_token"'))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def _json_endpoint(handler: Callable[[Request], Awaitable[tuple[int, Any]]]
                   ) -> Callable[[Request], Awaitable[Response]]:
    """Turn a handler's ``(status, JSON)`` or any failure into a JSON response."""
    async def endpoint(request: Request) -> Response:
        try:
            status, content = await handler(request)
            payload = content if content.__class__ is bytes else json.dumps(
                content, separators=(",", ":")).encode()
        except Exception as exc:
            _, status, payload = failure(exc, request.url.path)
        # No bearer challenge here: these endpoints do not take the access token, and a
        # wrong client credential is not an invalid bearer token (RFC 6749 §5.2).
        return Response(payload, status, media_type="application/json")
    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


async def _body_of(request: Request) -> Any:
    return parse_json(await _read_body(request.receive, _declared_length(request.headers)))


class _Endpoints:
    """The JSON endpoints other than authorize: the token, the keys and ``/sandbox/v1/*``."""

    def __init__(self, service: Service, rotate: Callable[[], str]) -> None:
        self.service = service
        self.rotate = rotate

    async def issue_token(self, request: Request) -> tuple[int, Any]:
        """SPEC endpoint 3: client credentials → a signed access token."""
        credentials = parse_credentials(await _body_of(request))
        token, ttl = self.service.issue_access_token(credentials.client_id,
                                                     credentials.client_secret)
        return 200, {"accessToken": token, "expiresIn": ttl, "tokenType": "Bearer"}

    async def discovery_keys(self, request: Request) -> tuple[int, Any]:
        """SPEC endpoint 2: the public sig and enc keys."""
        self.service.counters.count("keys_served")
        return 200, self.service.keys.discovery_body

    async def openapi(self, request: Request) -> tuple[int, Any]:
        """The shipped OpenAPI 3.1 document of the three SPEC endpoints."""
        from authzkit.openapi import openapi_bytes

        return 200, openapi_bytes()

    async def world(self, request: Request) -> tuple[int, Any]:
        """The loaded world (demo secrets included: it is a sandbox)."""
        return 200, self.service.world.to_json()

    async def sessions(self, request: Request) -> tuple[int, Any]:
        """Mint a subject session token."""
        wanted = parse_session(await _body_of(request))
        token, ttl = self.service.mint_session(wanted.subject, wanted.ttl)
        return 200, {"token": token, "expires_in": ttl}

    async def stats(self, request: Request) -> tuple[int, Any]:
        """The counters."""
        return 200, self.service.counters.snapshot()

    async def rotate_keys(self, request: Request) -> tuple[int, Any]:
        """Replace the encryption key (generation runs off the event loop)."""
        return 200, {"kid": await run_in_threadpool(self.rotate)}


async def _any_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (unknown path, wrong method) and anything unhandled."""
    _, status, payload = failure(exc, request.url.path)
    headers = getattr(exc, "headers", None) if isinstance(exc, HTTPException) else None
    return Response(payload, status, headers=headers, media_type="application/json")


def build_app(service: Service, *, rotate_keys: Callable[[], str] | None = None) -> Starlette:
    """The Starlette app serving ``service``; ``rotate_keys`` defaults to the key ring's."""
    endpoints = _Endpoints(service, rotate_keys or service.keys.rotate)
    routes = [
        Route(AUTHORIZE_PATH, AuthorizeEndpoint(service), methods=["POST"]),
        Route(TOKEN_PATH, _json_endpoint(endpoints.issue_token), methods=["POST"]),
        Route(DISCOVERY_PATH, _json_endpoint(endpoints.discovery_keys), methods=["GET"]),
        Route("/openapi.json", _json_endpoint(endpoints.openapi), methods=["GET"]),
        Route("/sandbox/v1/world", _json_endpoint(endpoints.world), methods=["GET"]),
        Route("/sandbox/v1/sessions", _json_endpoint(endpoints.sessions), methods=["POST"]),
        Route("/sandbox/v1/stats", _json_endpoint(endpoints.stats), methods=["GET"]),
        Route("/sandbox/v1/rotate-keys", _json_endpoint(endpoints.rotate_keys),
              methods=["POST"]),
    ]
    return Starlette(routes=routes,
                     exception_handlers={HTTPException: _any_error, Exception: _any_error})


__all__ = ["MAX_BODY_BYTES", "AuthorizeEndpoint", "build_app", "failure"]
