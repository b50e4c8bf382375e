"""The open model's HTTP: geventhttpclient's pooled client straight, one request event a call.

A generator that keeps a schedule must be cheap per call: every microsecond it spends on a
call is a microsecond a due start may wait (schedule lag). Locust's ``FastHttpSession``
wraps the same geventhttpclient connection pool in a user agent (URL re-parsing and
re-quoting, a cookie jar, a response wrapper) and a ``catch_response`` context manager;
together they cost about as much as the request itself. The open-model users send through
:class:`ScheduledTransport` instead: a connection pool per origin, the request timed here,
and one call of Locust's request event per request with exactly the fields Locust's own
sessions report (so Locust's rows, failures and our histograms see the same thing as for
the closed-loop users). Challenge 403s are successes, everything else not 2xx a failure
named by the service's error type, as in :class:`~authzkit.transport.LocustTransport`.

The first ``authorize`` request of each scheduled call (:meth:`ScheduledTransport.expect`)
reports its response time from the call's INTENDED start and keeps the time from the
actual send, the service time, in its ``context`` (see :mod:`authzkit.loadtest.record.tasks`).
Free of locust: the request event's ``fire`` is passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from geventhttpclient import HTTPClient
from greenlet import getcurrent

from authzkit.errors import TransportError
from authzkit.loadtest.record.tasks import SCHEDULED_REQUEST, SERVICE_MS
from authzkit.transport import HttpResponse, encode_body, locust_verdict, request_headers

# geventhttpclient raises these for refused connections, timeouts and unparsable answers
# (gevent's Timeout derives from BaseException, so it is named on its own).
_SEND_ERRORS: tuple[type[BaseException], ...]
try:
    from gevent import Timeout as _GeventTimeout
    from geventhttpclient.response import HTTPParseError

    _SEND_ERRORS = (OSError, HTTPParseError, _GeventTimeout)
except ImportError:  # pragma: no cover - geventhttpclient always brings gevent
    _SEND_ERRORS = (OSError,)


class ScheduledTransport:
    """A :class:`~authzkit.transport.Transport` for the open model's users.

    ``concurrency`` bounds the connections per origin (calls beyond it wait for one, like
    any pooled HTTP client); ``timeout`` bounds connecting and every read. ``current`` names
    the calling greenlet, which owns the pending schedule lag of its call.
    """

    def __init__(
        self,
        *,
        fire: Callable[..., Any],
        timeout: float,
        concurrency: int,
        current: Callable[[], Any] = getcurrent,
    ) -> None:
        self._fire = fire
        self.timeout = timeout
        self.concurrency = max(int(concurrency), 1)
        self._current = current
        self._pending: dict[Any, float] = {}
        self._clients: dict[tuple[str, str], HTTPClient] = {}
        self._routes: dict[str, tuple[HTTPClient, str]] = {}  # URL → (its pool, its target)

    def expect(self, lag_ms: float) -> None:
        """The caller's next ``authorize`` request started ``lag_ms`` after its time."""
        self._pending[self._current()] = lag_ms

    def forget(self) -> None:
        """The caller's scheduled call ended (its lag is dropped if never used)."""
        self._pending.pop(self._current(), None)

    def _route(self, url: str) -> tuple[HTTPClient, str]:
        """The pooled client and request target of ``url``, parsed once per URL (a schedule
        sends the same URL again and again; parsing it is a cost per start)."""
        route = self._routes.get(url)
        if route is None:
            parts = urlsplit(url)
            path = parts.path or "/"
            target = f"{path}?{parts.query}" if parts.query else path
            route = self._routes[url] = (self._client(parts.scheme, parts.netloc), target)
        return route

    def _client(self, scheme: str, netloc: str) -> HTTPClient:
        client = self._clients.get((scheme, netloc))
        if client is None:
            client = HTTPClient.from_url(
                f"{scheme}://{netloc}/",
                concurrency=self.concurrency,
                connection_timeout=self.timeout,
                network_timeout=self.timeout,
            )
            self._clients[(scheme, netloc)] = client
        return client

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> HttpResponse:
        """One call; its request event fired; :class:`TransportError` when no answer came."""
        data = encode_body(json_body, headers)
        client, target = self._route(url)
        started = time.perf_counter()
        try:
            response = client.request(
                method, target, body=data, headers=request_headers(headers, data is not None)
            )
            try:
                content = response.read()
            finally:
                response.release()
        except _SEND_ERRORS as exc:
            error = TransportError(f"{name}: cannot reach {url}: {type(exc).__name__}")
            self._report(method, name, started, 0, error)
            raise error from None
        answer = HttpResponse(
            response.status_code,
            _Headers(response),
            content,
            (time.perf_counter() - started) * 1000.0,
        )
        verdict = locust_verdict(answer)
        self._report(
            method,
            name,
            started,
            len(content),
            None if verdict is None else RequestFailure(verdict),
            answer.elapsed_ms,
        )
        return answer

    def _report(
        self,
        method: str,
        name: str,
        started: float,
        length: int,
        exception: BaseException | None,
        elapsed_ms: float | None = None,
    ) -> None:
        service = (time.perf_counter() - started) * 1000.0 if elapsed_ms is None else elapsed_ms
        response_time = service
        if name == SCHEDULED_REQUEST:
            response_time += self._pending.pop(self._current(), 0.0)
        self._fire(
            request_type=method,
            name=name,
            response_time=response_time,
            response_length=length,
            exception=exception,
            context={SERVICE_MS: service},
        )

    def close(self) -> None:
        """Close every pooled connection."""
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        self._routes.clear()


class RequestFailure(Exception):
    """A request's failure as Locust shows it: the status and the service's error type."""


class _Headers(Mapping[str, str]):
    """A response's headers, case-insensitive (geventhttpclient's own lookups are)."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def __getitem__(self, key: str) -> str:
        value = self._response.get(key)
        if value is None:
            raise KeyError(key)
        return value if isinstance(value, str) else ", ".join(value)

    def get(self, key: str, default: Any = None) -> Any:
        value = self._response.get(key)
        if value is None:
            return default
        return value if isinstance(value, str) else ", ".join(value)

    def __iter__(self) -> Any:
        return (key for key, _ in self._response.items())

    def __len__(self) -> int:
        return sum(1 for _ in self._response.items())


__all__ = ["RequestFailure", "ScheduledTransport"]
