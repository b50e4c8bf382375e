"""The sandbox's HTTP face: the SPEC endpoints plus ``/sandbox/v1/*``, as a Starlette app.

Every answer is JSON and no failure is ever a 5xx; authorize, the hot path of every load
test, is a bare ASGI callable (docs/internals.md, "Endpoints").
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

from authzkit.sandbox.decisions import Service
from authzkit.sandbox.dialects import Dialect, DraftDialect, dialect_for, failure
from authzkit.sandbox.oidc import Issuer, oidc_routes
from authzkit.sandbox.received import Received
from authzkit.sandbox.validation import (
    MAX_BODY_BYTES,
    InvalidBody,
    declared_length,
    parse_authorize,
    parse_credentials,
    parse_json,
    parse_session,
    read_body,
)
from authzkit.wire.spec import AUTHORIZE_PATH, DISCOVERY_PATH, SANDBOX_IDENTITY, TOKEN_PATH
from authzkit.wire.version import __version__

_JSON = b"application/json"
log = logging.getLogger(__name__)


class AuthorizeEndpoint:
    """SPEC endpoint 1 as a bare ASGI callable (a class, so Starlette does not wrap it)."""

    def __init__(self, service: Service, dialect: Dialect | None = None) -> None:
        self.service = service
        self.dialect = dialect or DraftDialect(service.world)

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
        extra: list[tuple[bytes, bytes]] = []
        try:
            body = await read_body(receive, declared)
            self.service.resource_server(authorization)
            action, after_challenge = self.service.authorize(parse_authorize(parse_json(body)))
            status, payload = 200, self.dialect.authorized(action, after_challenge)
        except Exception as exc:  # the promise is "never a 5xx", even for our own bugs
            outcome, status, payload, extra = self.dialect.refused(exc, scope)
        self.service.counters.outcome(outcome)
        headers = [
            (b"content-type", _JSON),
            (b"content-length", str(len(payload)).encode()),
            *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def _json_endpoint(
    handler: Callable[[Request], Awaitable[tuple[int, Any]]],
) -> Callable[[Request], Awaitable[Response]]:
    """Turn a handler's ``(status, JSON)`` or any failure into a JSON response."""

    async def endpoint(request: Request) -> Response:
        try:
            status, content = await handler(request)
            payload = (
                content
                if content.__class__ is bytes
                else json.dumps(content, separators=(",", ":")).encode()
            )
        except Exception as exc:
            _, status, payload = failure(exc, request.url.path)
        # No bearer challenge here: these endpoints do not take the access token, and a
        # wrong client credential is not an invalid bearer token (RFC 6749 §5.2).
        return Response(payload, status, media_type="application/json")

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


async def _body_of(request: Request) -> Any:
    return parse_json(await read_body(request.receive, declared_length(request.headers)))


class _Endpoints:
    """The JSON endpoints other than authorize: the token, the keys and ``/sandbox/v1/*``."""

    def __init__(
        self,
        service: Service,
        rotate: Callable[[], str],
        dialect: str,
        fault_counts: Callable[[], dict[str, int]] | None = None,
        issuer: Issuer | None = None,
        announce: bool = True,
        reset_all: Callable[[bool | None], None] | None = None,
        received_log: Callable[[], list[Received]] | None = None,
        service_time: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.reset_all = reset_all
        self.service_time_of = service_time
        self.received_log = received_log
        self.service = service
        self.rotate = rotate
        self.dialect = dialect
        self.fault_counts = fault_counts
        self.issuer = issuer
        self.announce = announce

    async def issue_token(self, request: Request) -> tuple[int, Any]:
        """SPEC endpoint 3: client credentials → a signed access token."""
        credentials = parse_credentials(await _body_of(request))
        token, ttl = self.service.issue_access_token(
            credentials.client_id, credentials.client_secret
        )
        return 200, {"accessToken": token, "expiresIn": ttl, "tokenType": "Bearer"}

    async def discovery_keys(self, request: Request) -> tuple[int, Any]:
        """SPEC endpoint 2: the public sig and enc keys."""
        self.service.counters.count("keys_served")
        return 200, self.service.keys.discovery_body

    async def openapi(self, request: Request) -> tuple[int, Any]:
        """The shipped OpenAPI 3.1 document of this dialect's endpoints."""
        from authzkit.wire.openapi import openapi_bytes

        return 200, openapi_bytes(self.dialect)

    async def world(self, request: Request) -> tuple[int, Any]:
        """The loaded world (demo secrets included: it is a sandbox), and beside it what
        says so (:data:`~authzkit.wire.spec.SANDBOX_IDENTITY`: version, dialect, issuer), so a
        client pointed here by ``AUTHZKIT_BASE_URL`` alone knows it is a sandbox."""
        if not self.announce:
            return 200, self.service.world.to_json()
        issuer = (
            self.issuer.seen_by(request).url
            if self.issuer is not None and self.dialect == "published"
            else None
        )
        return 200, {
            **self.service.world.to_json(),
            SANDBOX_IDENTITY: {"version": __version__, "dialect": self.dialect, "issuer": issuer},
        }

    async def sessions(self, request: Request) -> tuple[int, Any]:
        """Mint a subject session token."""
        wanted = parse_session(await _body_of(request))
        token, ttl = self.service.mint_session(wanted.subject, wanted.ttl)
        return 200, {"token": token, "expires_in": ttl}

    async def stats(self, request: Request) -> tuple[int, Any]:
        """The counters, and under ``faults`` what fault injection did (a sandbox started
        with faults only), so a process that started it can see its flags took effect."""
        counters = self.service.counters.snapshot()
        if self.fault_counts is not None:
            counters["faults"] = self.fault_counts()
        return 200, counters

    async def service_time(self, request: Request) -> tuple[int, Any]:
        """The authorize service time the sandbox measured (arrival to response, µs
        HdrHistogram) and the shape asked (``--service-time-us``, ``--concurrency``): what
        a benchmark compares a load test's figures with. ``measured`` is false without
        faults (nothing is measured then)."""
        if self.service_time_of is None:
            return 200, {"endpoint": "authorize", "measured": False, "unit": "us", "count": 0}
        return 200, self.service_time_of()

    async def rotate_keys(self, request: Request) -> tuple[int, Any]:
        """Replace the encryption key (generation runs off the event loop)."""
        return 200, {"kid": await run_in_threadpool(self.rotate)}

    async def reset(self, request: Request) -> tuple[int, Any]:
        """Forget the sessions, challenges, used assertion ids, counters and the record, and
        start the faults' schedule again; an optional ``{"record": true|false}`` turns the
        record of received exchanges on or off (keys and world stay)."""
        raw = await read_body(request.receive, declared_length(request.headers))
        body = parse_json(raw) if raw.strip() else {}
        if body.__class__ is not dict:
            raise InvalidBody("request_body", "request_body must be a JSON object")
        record = body.get("record")
        if record is not None and record.__class__ is not bool:
            raise InvalidBody("request_body.record", "record must be true or false")
        if self.reset_all is None:
            raise InvalidBody("request_body", "this sandbox cannot be reset over HTTP")
        self.reset_all(record)
        return 200, {"reset": True}

    async def received(self, request: Request) -> tuple[int, Any]:
        """The exchanges recorded since the last reset (masked), oldest first; an empty list
        while recording is off."""
        found = self.received_log() if self.received_log is not None else []
        return 200, {"received": [r.to_json() for r in found]}


def _error_handler(dialect: Dialect) -> Callable[[Request, Exception], Awaitable[Response]]:
    """Starlette's own errors (unknown path, wrong method) in the dialect's words, and
    anything unhandled in the draft's (a clean 400)."""

    async def any_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            status, payload = dialect.routing_error(exc, request.scope)
            return Response(payload, status, headers=exc.headers, media_type="application/json")
        _, status, payload = failure(exc, request.url.path)
        return Response(payload, status, media_type="application/json")

    return any_error


def _draft_token_routes(endpoints: _Endpoints, issuer: Issuer) -> list[Route]:
    return [Route(TOKEN_PATH, _json_endpoint(endpoints.issue_token), methods=["POST"])]


def _published_token_routes(endpoints: _Endpoints, issuer: Issuer) -> list[Route]:
    return oidc_routes(endpoints.service, issuer)


# Where each dialect issues access tokens: the draft's JSON endpoint, or an OIDC realm.
TOKEN_ROUTES: dict[str, Callable[[_Endpoints, Issuer], list[Route]]] = {
    "draft": _draft_token_routes,
    "published": _published_token_routes,
}


def build_app(
    service: Service,
    *,
    rotate_keys: Callable[[], str] | None = None,
    dialect: str = "draft",
    base_url: str = "http://127.0.0.1",
    fault_counts: Callable[[], dict[str, int]] | None = None,
    announce: bool = True,
    reset: Callable[[bool | None], None] | None = None,
    received: Callable[[], list[Received]] | None = None,
    service_time: Callable[[], dict[str, Any]] | None = None,
) -> Starlette:
    """The Starlette app serving ``service`` in ``dialect`` (``spec.DIALECTS``);
    ``rotate_keys`` defaults to the key ring's, ``base_url`` places the published issuer,
    ``fault_counts`` (given when faults are injected) adds ``faults`` to the stats;
    ``announce=False`` leaves the sandbox's identity out of its world document;
    ``reset`` serves ``POST /sandbox/v1/reset`` (given the ``record`` switch) and
    ``received`` ``GET /sandbox/v1/received`` (see :mod:`authzkit.sandbox.received`),
    ``service_time`` (given when faults are injected) ``GET /sandbox/v1/service-time``.

    The published dialect's ``x-request-id`` header comes from
    :class:`authzkit.sandbox.dialects.RequestIds`, wrapped around the app by the caller
    (outside fault injection, so that injected 503s carry it too).
    """
    words = dialect_for(dialect, service.world)
    issuer = Issuer(base_url)
    endpoints = _Endpoints(
        service,
        rotate_keys or service.keys.rotate,
        dialect,
        fault_counts,
        issuer if announce else None,
        announce,
        reset,
        received,
        service_time,
    )
    routes = [
        Route(AUTHORIZE_PATH, AuthorizeEndpoint(service, words), methods=["POST"]),
        *TOKEN_ROUTES[dialect](endpoints, issuer),
        Route(DISCOVERY_PATH, _json_endpoint(endpoints.discovery_keys), methods=["GET"]),
        Route("/openapi.json", _json_endpoint(endpoints.openapi), methods=["GET"]),
        Route("/sandbox/v1/world", _json_endpoint(endpoints.world), methods=["GET"]),
        Route("/sandbox/v1/sessions", _json_endpoint(endpoints.sessions), methods=["POST"]),
        Route("/sandbox/v1/stats", _json_endpoint(endpoints.stats), methods=["GET"]),
        Route("/sandbox/v1/rotate-keys", _json_endpoint(endpoints.rotate_keys), methods=["POST"]),
        Route("/sandbox/v1/reset", _json_endpoint(endpoints.reset), methods=["POST"]),
        Route("/sandbox/v1/received", _json_endpoint(endpoints.received), methods=["GET"]),
        Route("/sandbox/v1/service-time", _json_endpoint(endpoints.service_time), methods=["GET"]),
    ]
    handler = _error_handler(words)
    return Starlette(routes=routes, exception_handlers={HTTPException: handler, Exception: handler})


__all__ = ["MAX_BODY_BYTES", "TOKEN_ROUTES", "AuthorizeEndpoint", "build_app", "failure"]
