"""The HTTP seam: one ``request`` call over requests or Locust's two sessions.

Everything above this module sees :class:`HttpResponse` and :class:`TransportError` only;
every exception of the HTTP library is translated here, in one place. Locust is never
imported: its ``HttpSession`` and ``FastHttpSession`` are recognised by their ``request``
signature (they accept ``catch_response=``), so the same client runs inside a locustfile
with per-endpoint rows (``name=``) and honest success/failure marks.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from time import perf_counter
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlencode

import requests

from authzkit.wire.error_table import NOT_JSON, snippet
from authzkit.wire.errors import AuthzError, TlsError, TransportError, UnexpectedResponseError
from authzkit.wire.spec import error_type, is_challenge
from authzkit.wire.tls import TlsSettings, tls_failure

_JSON = "application/json"
FORM = "application/x-www-form-urlencoded"  # the OAuth 2.0 token endpoint's body


class HttpResponse:
    """What came back: status, headers, raw bytes and how long it took (milliseconds).

    A slotted plain class (built once per request on a load test's hot path): equal when
    status, headers, content and ``elapsed_ms`` are; its repr shows status and time only.
    Treat it as read-only.
    """

    __slots__ = ("_body", "content", "elapsed_ms", "headers", "status")
    __match_args__ = ("status", "headers", "content", "elapsed_ms")

    status: int
    headers: Mapping[str, str]
    content: bytes
    elapsed_ms: float

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        content: bytes,
        elapsed_ms: float = 0.0,
    ) -> None:
        self.status = status
        self.headers = headers
        self.content = content
        self.elapsed_ms = elapsed_ms
        self._body: tuple[Any] | None = None

    def __repr__(self) -> str:
        return f"HttpResponse(status={self.status!r}, elapsed_ms={self.elapsed_ms!r})"

    def _fields(self) -> tuple[int, Mapping[str, str], bytes, float]:
        return (self.status, self.headers, self.content, self.elapsed_ms)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HttpResponse) and other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON, or :class:`UnexpectedResponseError` quoting a snippet."""
        try:
            # Decoding first skips json's byte-encoding detection (a hot path under load).
            return json.loads(self.content.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError is a ValueError
            raise UnexpectedResponseError(
                f"HTTP {self.status} with a body that is not JSON: {snippet(self.text)!r}",
                status=self.status,
                body=self.text,
            ) from exc

    def body(self) -> Any:
        """The body parsed once, whoever asks first (Locust's verdict, then the outcome):
        JSON, ``None`` when empty, :data:`~authzkit.wire.error_table.NOT_JSON` when it is
        not JSON."""
        if self._body is None and self.content:
            try:
                parsed = json.loads(self.content.decode("utf-8"))
            except ValueError:
                parsed = NOT_JSON
            self._body = (parsed,)
        return self._body[0] if self._body is not None else None


class Transport(Protocol):
    """Sends one request; raises :class:`TransportError` when no HTTP answer arrives."""

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> HttpResponse:
        """Send ``json_body`` (if any) as JSON, or as is when it is already-encoded bytes;
        a mapping sent with ``Content-Type: application/x-www-form-urlencoded`` among the
        ``headers`` is form-encoded instead (the OAuth 2.0 token endpoint). ``name``
        groups the call in load-test rows."""
        ...


@runtime_checkable
class PreparedSender(Protocol):
    """A :class:`Transport` that also sends a prepared request as it is: the body already
    encoded and the complete headers (what :func:`request_headers` returns), so a load
    test's call builds them once (:class:`~authzkit.client.prepared.PreparedAuthorize`)."""

    def send(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
    ) -> HttpResponse:
        """:meth:`Transport.request` for a prepared body and complete headers."""
        ...


class RequestFailure(Exception):
    """A request's failure as Locust's failures table shows it: the status and the
    service's error type (``RequestFailure('HTTP 403 srn:error:unauthorized')``), whichever
    transport sent it."""


def is_form(headers: Mapping[str, str] | None) -> bool:
    """True when ``headers`` name the form content type (the body is then form-encoded)."""
    if not headers:
        return False
    return any(
        k.lower() == "content-type" and v.split(";")[0].strip().lower() == FORM
        for k, v in headers.items()
    )


def encode_body(json_body: Any, headers: Mapping[str, str] | None = None) -> bytes | None:
    """The exact bytes sent for a body: compact UTF-8 JSON, or a form when ``headers`` say
    so (see :func:`is_form`); bytes are sent as they are (a body the caller already
    encoded, e.g. the client's cached authorize body)."""
    if json_body is None:
        return None
    if json_body.__class__ is bytes:
        return json_body
    if headers and is_form(headers) and isinstance(json_body, Mapping):
        return urlencode(dict(json_body)).encode()
    return json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode()


def name_endpoint(error: AuthzError, what: str, url: str) -> AuthzError:
    """Put ``what`` and ``url`` in a 5xx error's message, in place; returns ``error``.

    A server fault's own detail ("temporarily unavailable") does not say which call failed;
    a refusal (4xx) is about the request and keeps the service's words as they are.
    """
    if error.status is not None and error.status >= 500 and url not in error.message:
        error.message = f"{what} at {url} failed: {error.message}"
        error.args = (error.message,)
    return error


def request_headers(headers: Mapping[str, str] | None, has_body: bool) -> dict[str, str]:
    """The headers sent: JSON accepted (and sent, with a body), then the caller's own."""
    sent = {"Accept": _JSON}
    if has_body:
        sent["Content-Type"] = _JSON
    if headers:
        sent.update(headers)
    return sent


class PreparingTransport:
    """authzkit's own transports: :meth:`request` encodes the body and completes the
    headers once, then :meth:`send` (each transport's own) sends them as they are; a
    prepared call (:class:`~authzkit.client.prepared.PreparedAuthorize`) calls :meth:`send`
    itself."""

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> HttpResponse:
        """See :meth:`Transport.request`."""
        data = encode_body(json_body, headers)
        return self.send(method, url, name, request_headers(headers, data is not None), data)

    def send(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
    ) -> HttpResponse:
        """Send a body already encoded with the complete headers (what
        :func:`request_headers` returns)."""
        raise NotImplementedError


def unreachable(name: str, url: str, exc: BaseException, tls: TlsSettings | None) -> TransportError:
    """The error for a call that got no HTTP answer: a :class:`TlsError` saying what TLS
    said and which setting fixes it when TLS failed (the service did answer), else "cannot
    reach"."""
    failure = tls_failure(exc, url, tls)
    if failure is not None:
        return TlsError(f"{name}: {failure}")
    return TransportError(f"{name}: cannot reach {url}: {type(exc).__name__}")


class RequestsTransport(PreparingTransport):
    """A plain ``requests.Session``: the default, with a timeout on every call, and
    ``tls`` (the trust store and client certificate) on every call when given."""

    def __init__(
        self, session: requests.Session, *, timeout: float, tls: TlsSettings | None = None
    ) -> None:
        self.session = session
        self.timeout = timeout
        self.tls = tls
        self._tls_options = tls.requests_options() if tls is not None else {}

    def send(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
    ) -> HttpResponse:
        """:meth:`request` for a body already encoded and the complete headers
        (what :func:`request_headers` returns), sent as they are: a prepared call builds
        them once."""
        started = perf_counter()
        try:
            response = self.session.request(
                method, url, data=data, headers=headers, timeout=self.timeout, **self._tls_options
            )
        except requests.Timeout as exc:
            raise TransportError(f"{name}: no answer from {url} within {self.timeout} s") from exc
        except requests.RequestException as exc:
            raise unreachable(name, url, exc, self.tls) from exc
        return HttpResponse(
            response.status_code,
            response.headers,
            response.content,
            (perf_counter() - started) * 1000.0,
        )


def locust_verdict(response: HttpResponse) -> str | None:
    """``None`` when Locust should count the request a success, else the failure text.

    A 403 that demands a challenge is a normal step of the flow, not a failure.
    """
    status = response.status
    if 200 <= status < 300:
        return None
    body = response.body()
    if status == 403 and is_challenge(body):
        return None
    return f"HTTP {status} {error_type(body) or snippet(response.text)[:80]}"


class LocustTransport(PreparingTransport):
    """Locust's ``HttpSession`` or ``FastHttpSession`` (duck-typed, never imported).

    ``catch_response=True`` lets us mark challenge 403s a success and everything else a
    failure named by its service ``type``. ``FastHttpSession`` takes no per-request
    ``timeout=`` (its timeouts are set on the user), so it is passed only to ``HttpSession``,
    like ``tls`` (``FastHttpSession`` takes its TLS settings from the user's class).
    """

    def __init__(
        self,
        session: Any,
        *,
        timeout: float,
        pass_timeout: bool,
        tls: TlsSettings | None = None,
    ) -> None:
        self.session = session
        self.timeout = timeout
        self.tls = tls
        self._extra: dict[str, Any] = {}
        # A plain http:// URL leaves TLS out: requests looks a CA bundle's path up on disk at
        # every call it is given, for nothing on a connection without TLS.
        self._plain: dict[str, Any] = {}
        if pass_timeout:
            self._plain = {"timeout": timeout}
            self._extra = {**self._plain, **(tls.requests_options() if tls else {})}

    def send(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
    ) -> HttpResponse:
        """:meth:`request` for a body already encoded and the complete headers
        (what :func:`request_headers` returns), sent as they are: a prepared call builds
        them once.

        A load test's hot path: the status and the body are read off Locust's response
        once each, a 2xx is marked a success without a look at its body."""
        started = perf_counter()
        extra = self._plain if url.startswith("http:") else self._extra
        try:
            if extra:
                context = self.session.request(
                    method,
                    url,
                    name=name,
                    data=data,
                    headers=headers,
                    catch_response=True,
                    **extra,
                )
            else:
                context = self.session.request(
                    method, url, name=name, data=data, headers=headers, catch_response=True
                )
        except (requests.RequestException, OSError) as exc:  # e.g. an invalid URL
            raise unreachable(name, url, exc, self.tls) from exc
        with context as response:
            status = response.status_code or 0  # HttpSession: None on a connection error
            # `or {}` would call len() on geventhttpclient's headers, which walks them all.
            response_headers = response.headers
            if response_headers is None:
                response_headers = {}
            answer = HttpResponse(
                status,
                response_headers,
                response.content or b"",
                (perf_counter() - started) * 1000.0,
            )
            if 200 <= status < 300:
                response.success()
                return answer
            if status == 0:
                cause = getattr(response, "error", None)
                error = (
                    unreachable(name, url, cause, self.tls)
                    if cause is not None
                    else TransportError(f"{name}: cannot reach {url}: error")
                )
                response.failure(error)
            else:
                verdict = locust_verdict(answer)
                if verdict is None:
                    response.success()
                else:
                    response.failure(RequestFailure(verdict))
                return answer
        raise error


def _accepts_catch_response(session: Any) -> bool:
    try:
        return "catch_response" in inspect.signature(session.request).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def transport_for(session: Any, *, timeout: float, tls: TlsSettings | None = None) -> Transport:
    """The right :class:`Transport` for ``session`` (already a Transport is kept as is),
    sending with ``tls`` where the session is requests'.

    A ``requests.Session`` subclass whose ``request`` accepts ``catch_response`` is Locust's
    ``HttpSession``; any other such object is Locust's ``FastHttpSession``.
    """
    if isinstance(session, RequestsTransport | LocustTransport):
        return session
    if _accepts_catch_response(session):
        return LocustTransport(
            session, timeout=timeout, pass_timeout=isinstance(session, requests.Session), tls=tls
        )
    if isinstance(session, requests.Session):
        return RequestsTransport(session, timeout=timeout, tls=tls)
    if callable(getattr(session, "request", None)) and not hasattr(session, "mount"):
        already: Transport = session  # e.g. a recording wrapper or a test fake
        return already
    raise TypeError(f"cannot send HTTP with a {type(session).__name__}")


__all__ = [
    "FORM",
    "HttpResponse",
    "LocustTransport",
    "PreparedSender",
    "PreparingTransport",
    "RequestFailure",
    "RequestsTransport",
    "Transport",
    "encode_body",
    "is_form",
    "locust_verdict",
    "name_endpoint",
    "request_headers",
    "transport_for",
    "unreachable",
]
