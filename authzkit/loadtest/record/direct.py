"""authzkit's HTTP under load: geventhttpclient's pooled client straight, one request event
per request, with the fields Locust's own sessions give (challenge 403s successes, other
refusals failures named by the service's error type). The Fast users' transport, and the
open model's for its token, keys and challenge round trips; a scheduled request is timed
from its intended start when ``send`` is given it (:mod:`~authzkit.loadtest.record.timing`).
Free of locust: the request event's ``fire`` is passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from geventhttpclient import HTTPClient

from authzkit.client.transport import (
    HttpResponse,
    PreparingTransport,
    RequestFailure,
    locust_verdict,
    unreachable,
)
from authzkit.loadtest.record.data import SENT_BYTES
from authzkit.loadtest.record.timing import SERVICE_MS
from authzkit.wire.tls import TlsSettings

# geventhttpclient raises these for refused connections, timeouts and unparsable answers
# (gevent's Timeout derives from BaseException, so it is named on its own).
_SEND_ERRORS: tuple[type[BaseException], ...]
try:
    from gevent import Timeout as _GeventTimeout
    from geventhttpclient.response import HTTPParseError

    _SEND_ERRORS = (OSError, HTTPParseError, _GeventTimeout)
except ImportError:  # pragma: no cover - geventhttpclient always brings gevent
    _SEND_ERRORS = (OSError,)

_clock = time.perf_counter
_epoch = time.time


class DirectTransport(PreparingTransport):
    """A :class:`~authzkit.client.transport.Transport` (and
    :class:`~authzkit.client.transport.PreparedSender`) for authzkit's Locust users.

    ``concurrency`` bounds the connections per origin (calls beyond it wait for one, like
    any pooled HTTP client); ``timeout`` bounds every read and, unless
    ``connection_timeout`` is given, connecting. HTTPS connections trust and present what
    ``tls`` says (:mod:`authzkit.wire.tls`: the CA bundle, the client certificate); ``insecure``
    (or ``tls.insecure``) skips the certificate check, as ``FastHttpUser.insecure`` does.
    """

    def __init__(
        self,
        *,
        fire: Callable[..., Any],
        timeout: float,
        concurrency: int,
        connection_timeout: float | None = None,
        insecure: bool = False,
        tls: TlsSettings | None = None,
    ) -> None:
        self._fire = fire
        self.timeout = timeout
        self.connection_timeout = timeout if connection_timeout is None else connection_timeout
        self.concurrency = max(int(concurrency), 1)
        self.tls = tls or TlsSettings()
        if insecure and not self.tls.insecure:  # the user class's own FastHttpUser.insecure
            self.tls = replace(self.tls, insecure=True)
        self.insecure = self.tls.insecure
        self._clients: dict[tuple[str, str], HTTPClient] = {}
        self._routes: dict[str, tuple[HTTPClient, str]] = {}  # URL → (its pool, its target)

    def _route(self, url: str) -> tuple[HTTPClient, str]:
        """The pooled client and request target of ``url``, parsed once per URL (a load
        test sends the same URL again and again; parsing it is a cost per request)."""
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
                connection_timeout=self.connection_timeout,
                network_timeout=self.timeout,
                insecure=self.insecure,
                ssl_context_factory=self._ssl_context,
            )
            self._clients[(scheme, netloc)] = client
        return client

    def _ssl_context(self, **_defaults: Any) -> Any:
        """geventhttpclient's context factory: authzkit's trust store and client
        certificate (its own default would be a fixed CA bundle)."""
        return self.tls.ssl_context()

    def send(
        self,
        method: str,
        url: str,
        name: str,
        headers: Mapping[str, str],
        data: bytes | None,
        *,
        intended_at: float | None = None,
    ) -> HttpResponse:
        """:meth:`request` for a body already encoded and the complete headers, sent as
        they are (a prepared call builds them once); a scheduled request's row is timed
        from ``intended_at`` (``perf_counter`` seconds), its service time kept beside."""
        client, target = self._route(url)
        started_at = _epoch()
        started = _clock()
        try:
            response = client.request(method, target, body=data, headers=headers)
            try:
                content = response.read()
            finally:
                response.release()
        except _SEND_ERRORS as exc:
            error = unreachable(name, url, exc, self.tls)
            elapsed = (_clock() - started) * 1000.0
            self._report(
                method,
                name,
                url,
                started_at,
                elapsed,
                0,
                error,
                sent=None,
                lag=_lag(intended_at, started),
            )
            raise error from None
        elapsed = (_clock() - started) * 1000.0
        answer = HttpResponse(response.status_code, _Headers(response), content, elapsed)
        verdict = locust_verdict(answer)  # None for a 2xx, its body unread
        failure = None if verdict is None else RequestFailure(verdict)
        sent = len(data) if data else 0
        self._report(
            method,
            name,
            url,
            started_at,
            elapsed,
            len(content),
            failure,
            sent=sent,
            lag=_lag(intended_at, started),
        )
        return answer

    def _report(
        self,
        method: str,
        name: str,
        url: str,
        started_at: float,
        service: float,
        length: int,
        exception: BaseException | None,
        *,
        sent: int | None,
        lag: float = 0.0,
    ) -> None:
        """Locust's request event, with the fields its own sessions give (no ``response``:
        listeners reading Locust's response objects have none to read here); the body
        sent, when it was, in the context (:mod:`~authzkit.loadtest.record.data`)."""
        context: dict[str, float] = {SERVICE_MS: service}
        if sent is not None:
            context[SENT_BYTES] = sent
        self._fire(
            request_type=method,
            name=name,
            response_time=service + lag,
            response_length=length,
            exception=exception,
            context=context,
            start_time=started_at,
            url=url,
        )

    def close(self) -> None:
        """Close every pooled connection."""
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        self._routes.clear()


def _lag(intended_at: float | None, started: float) -> float:
    """Milliseconds from a scheduled request's intended start to its send (0 unscheduled)."""
    return 0.0 if intended_at is None else max(started - intended_at, 0.0) * 1000.0


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


__all__ = ["DirectTransport", "RequestFailure"]
