"""The AuthZEN sandbox's HTTP face: the five API endpoints and the PDP metadata at their
default paths, plus the sandbox's own ``/sandbox/v1/*`` (world, stats, reset, received,
service-time). Errors are the spec's: 400 for a request it refuses, 401 without the bearer
token when one is required, JSON ``{"error": {"status", "message"}}`` bodies.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from authzkit.sandbox.authzen.decisions import AuthzenService
from authzkit.sandbox.authzen.requests import BadRequest, check_content_type, parse_object
from authzkit.sandbox.authzen.search import search
from authzkit.sandbox.oidc import Issuer
from authzkit.sandbox.received import Received
from authzkit.sandbox.validation import MAX_BODY_BYTES, TooLarge, declared_length, read_body
from authzkit.wire.authzen import (
    EVALUATION_PATH,
    EVALUATIONS_PATH,
    METADATA_PATH,
    SEARCH_KINDS,
    SEARCH_PATHS,
    metadata_document,
)
from authzkit.wire.spec import AUTHZEN, SANDBOX_WORLD_PATH

log = logging.getLogger(__name__)
Handler = Callable[[Mapping[str, Any]], dict[str, Any]]


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """An AuthZEN error: the status and ``{"error": {"status", "message"}}``."""
    body = json.dumps({"error": {"status": status, "message": message}}, separators=(",", ":"))
    return Response(body, status, headers=dict(headers or {}), media_type="application/json")


def _json(content: Any) -> Response:
    return Response(json.dumps(content, separators=(",", ":")), 200, media_type="application/json")


class AuthzenEndpoints:
    """The API endpoints over one :class:`AuthzenService`; ``bearer_token`` (optional) is
    then required as ``Authorization: Bearer …`` on each of them."""

    def __init__(
        self, service: AuthzenService, base_url: str, bearer_token: str | None = None
    ) -> None:
        self.service = service
        self.issuer = Issuer(base_url)
        self._bearer = None if bearer_token is None else f"Bearer {bearer_token}".encode()

    def api(self, name: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """A POST endpoint: authentication, content type, body, then ``handler``."""

        async def endpoint(request: Request) -> Response:
            self.service.counters.call(name)
            given = request.headers.get("authorization", "").encode()
            if self._bearer is not None and not hmac.compare_digest(given, self._bearer):
                return error_response(
                    401, "a valid bearer token is required", {"WWW-Authenticate": "Bearer"}
                )
            try:
                check_content_type(request.headers.get("content-type"))
                body = parse_object(
                    await read_body(request.receive, declared_length(request.headers))
                )
                return _json(handler(body))
            except BadRequest as exc:
                return error_response(400, exc.message)
            except TooLarge:
                return error_response(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
            except Exception as exc:  # a reference PDP never answers 5xx for its own bug
                log.warning("authzen sandbox: unexpected %s on %s", type(exc).__name__, name)
                return error_response(400, "the sandbox could not process this request")

        endpoint.__name__ = name
        return endpoint

    async def metadata(self, request: Request) -> Response:
        """``GET /.well-known/authzen-configuration``: every endpoint, at the URL the client
        used (``localhost`` or ``127.0.0.1``), so its ``policy_decision_point`` matches."""
        return _json(metadata_document(self.issuer.seen_by(request).base_url))

    def routes(self) -> list[Route]:
        service = self.service
        routes = [
            Route(METADATA_PATH, self.metadata, methods=["GET"]),
            Route(EVALUATION_PATH, self.api("evaluation", service.evaluate), methods=["POST"]),
            Route(EVALUATIONS_PATH, self.api("evaluations", service.evaluations), methods=["POST"]),
        ]
        for kind in SEARCH_KINDS:
            handler = _searcher(service, kind)
            routes.append(
                Route(SEARCH_PATHS[kind], self.api(f"search_{kind}", handler), methods=["POST"])
            )
        return routes


def _searcher(service: AuthzenService, kind: str) -> Handler:
    return lambda body: search(service, kind, body)


def _sandbox_routes(
    service: AuthzenService,
    announce: bool,
    reset: Callable[[bool | None], None] | None,
    received: Callable[[], list[Received]] | None,
    service_time: Callable[[], dict[str, Any]] | None,
    fault_counts: Callable[[], dict[str, int]] | None,
) -> list[Route]:
    """``/sandbox/v1/*`` on AuthZEN, reusing the draft's handlers (they read only the
    world, the counters and the callbacks)."""
    from authzkit.sandbox.endpoints import _Endpoints, _json_endpoint

    def no_keys() -> str:
        raise BadRequest("an AuthZEN sandbox has no keys")

    endpoints = _Endpoints(
        service,  # type: ignore[arg-type]  # the world/counters duck type the draft's
        no_keys,
        AUTHZEN,
        fault_counts,
        None,
        announce,
        reset,
        received,
        service_time,
    )
    return [
        Route(SANDBOX_WORLD_PATH, _json_endpoint(endpoints.world), methods=["GET"]),
        Route("/sandbox/v1/stats", _json_endpoint(endpoints.stats), methods=["GET"]),
        Route("/sandbox/v1/reset", _json_endpoint(endpoints.reset), methods=["POST"]),
        Route("/sandbox/v1/received", _json_endpoint(endpoints.received), methods=["GET"]),
        Route("/sandbox/v1/service-time", _json_endpoint(endpoints.service_time), methods=["GET"]),
    ]


async def _routing_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return error_response(exc.status_code, str(exc.detail), exc.headers)
    log.warning("authzen sandbox: unexpected %s on %s", type(exc).__name__, request.url.path)
    return error_response(400, "the sandbox could not process this request")


def build_authzen_app(
    service: AuthzenService,
    *,
    base_url: str = "http://127.0.0.1",
    bearer_token: str | None = None,
    announce: bool = True,
    reset: Callable[[bool | None], None] | None = None,
    received: Callable[[], list[Received]] | None = None,
    service_time: Callable[[], dict[str, Any]] | None = None,
    fault_counts: Callable[[], dict[str, int]] | None = None,
) -> Starlette:
    """The Starlette app of an AuthZEN sandbox (the request-id echo, faults and recording
    are wrapped around it by :class:`~authzkit.sandbox.embedded.Sandbox`)."""
    routes = [
        *AuthzenEndpoints(service, base_url, bearer_token).routes(),
        *_sandbox_routes(service, announce, reset, received, service_time, fault_counts),
    ]
    return Starlette(
        routes=routes, exception_handlers={HTTPException: _routing_error, Exception: _routing_error}
    )


__all__ = ["AuthzenEndpoints", "build_authzen_app", "error_response"]
