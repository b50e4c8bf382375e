"""Where a scheduled call is timed, from its intended start to its end.

The open model's call carries its intended start (``perf_counter`` seconds) as an argument.
Its request is reported once: the response time from the intended start, the service time
(from the start of its write) in the row's context, and the schedule lag up to the end of
its write, the time the request was on the wire. :class:`OpenAuthorize` is the plain
authorize's hot path; :class:`Scheduled` lends a challenge round trip's client its start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from authzkit.client.authorize import build_body
from authzkit.client.prepared import scrub_error
from authzkit.client.token import AccessToken, TokenProvider
from authzkit.client.transport import (
    HttpResponse,
    PreparingTransport,
    RequestFailure,
    Transport,
    encode_body,
    locust_verdict,
    request_headers,
    unreachable,
)
from authzkit.client.unauthenticated import resend_after_401
from authzkit.loadtest.record.collect import COLLECTOR, LATE, READY
from authzkit.loadtest.record.data import SENT_BYTES
from authzkit.loadtest.record.keepalive import Answer, ClosedEarly, InFlight, KeptAlive, RawHeaders
from authzkit.wire.errors import AuthzError
from authzkit.wire.redact import Secret
from authzkit.wire.tls import TlsSettings

# Key of a request event's ``context`` holding the service time (ms) of an open-model row.
SERVICE_MS = "authzkit_service_ms"
# Key of a row's ``context`` holding when its answer came (epoch seconds), for a row told
# after that (:class:`HeldRows`): the second it counts in is its answer's.
ANSWERED_AT = "authzkit_answered_at"
# Rows held before a wake with room tells them together, and the longest the first waits.
ROWS_TOLD_TOGETHER = 32
ROWS_HELD_S = 0.1
SCHEDULED_REQUEST = "authorize"  # the request a scheduled start intends to send
NAME = "authorize"
_clock = time.perf_counter
_epoch = time.time

# Told when a scheduled call's request is on the wire: (intended start, end of its write).
OnWire = Callable[[float, float], Any]


class OpenAuthorize:
    """One user's plain authorize for the open model: the request's bytes built once per
    access token, written to a kept-alive connection, its answer read just enough; the
    401 policy, the scrubbed errors and the rows are the core client's."""

    def __init__(
        self,
        *,
        base_url: str,
        request: Mapping[str, Any],
        action: str,
        token_provider: TokenProvider,
        transport: Transport,
        fire: Callable[..., Any],
        timeout: float,
        tls: TlsSettings | None,
        secrets: Callable[[], list[Any]],
    ) -> None:
        from authzkit.wire.spec import AUTHORIZE_PATH

        self.url = base_url.rstrip("/") + AUTHORIZE_PATH
        body = encode_body(build_body(action, **request))
        assert body is not None
        self.body = body
        self.wire = KeptAlive(self.url, timeout=timeout, tls=tls, collector=COLLECTOR)
        self.subject_token: str | Secret = request["subject_token"]
        self._provider = token_provider
        self._transport = transport
        self._fire = fire
        self._secrets = secrets
        self._bytes: tuple[str, bytes] = ("", b"")  # (access token, the request it signs)

    def _request(self, token: str) -> bytes:
        built = self._bytes
        if built[0] != token:  # a refreshed token: the bytes are built again
            headers = request_headers({"Authorization": "Bearer " + token}, True)
            built = self._bytes = (token, self.wire.request_bytes("POST", headers, self.body))
        return built[1]

    def __call__(
        self, intended_at: float | None, on_wire: OnWire | None = None
    ) -> HttpResponse | None:
        """Send it (meant to start at ``intended_at``; ``None``: now, a resend): ``None``
        for a 200, else the answer once the 401 policy is applied, unread. A call that got
        no answer raises the core's error; every request is one row."""
        try:
            try:
                access = self._provider.access_token(self._transport)
            except AuthzError:
                if on_wire is not None and intended_at is not None:
                    on_wire(intended_at, _clock())  # never sent: counted as sent now
                raise
            return self._outcome(self._exchange(access.value, intended_at, on_wire), access)
        except AuthzError as exc:
            scrub_error(exc, [self.subject_token, *self._secrets()])
            raise

    def send_now(self, intended_at: float, on_wire: OnWire, calls: SentCalls) -> bool:
        """The same call, written by the schedule itself and ended at one of its wakes when
        its answer came (no greenlet, no wake of its own); a greenlet from ``calls`` ends it
        otherwise. ``False``, nothing done, when it must be a call of its own: no answer
        collector waiting, no fresh token, no idle plain connection."""
        if not COLLECTOR.active:
            return False
        access = self._provider.fresh()
        if access is None:
            return False
        started_at = _epoch()
        flight = self.wire.send_now(self._request(access.value))
        if flight is None:
            return False
        on_wire(intended_at, flight.write_ended)
        sent = Sent(self, calls, flight, access, intended_at, started_at)
        COLLECTOR.hold(flight.sock, flight.write_ended + self.wire.timeout, sent)
        return True

    def finish(self, sent: Sent, outcome: int) -> HttpResponse | None:
        """The rest of a call :meth:`send_now` wrote, as :meth:`__call__` would end it."""
        try:
            try:
                if outcome == LATE:
                    self.wire.abandon(sent.flight)
                    raise TimeoutError("timed out")
                try:
                    answer = self.wire.finish(sent.flight)
                except (ClosedEarly, BrokenPipeError, ConnectionResetError):
                    # closed while idle: once more on a new connection, as exchange does
                    answer = self.wire.exchange(self._request(sent.access.value))
            except OSError as exc:
                raise self._failed(exc, sent.intended_at, sent.started_at, _clock()) from None
            service = self._record(answer, sent.intended_at, sent.started_at)
            return self._outcome(_Timed(answer, service), sent.access)
        except AuthzError as exc:
            scrub_error(exc, [self.subject_token, *self._secrets()])
            raise

    def _outcome(self, answer: _Timed, access: AccessToken) -> HttpResponse | None:
        """``None`` for a 200, else the answer once the 401 policy is applied."""
        if answer.status == 200:
            return None
        response = HttpResponse(
            answer.status, RawHeaders(answer.head), answer.body, answer.elapsed_ms
        )
        if response.status == 401:
            response = resend_after_401(
                response,
                provider=self._provider,
                access=access,
                subject_token=self.subject_token,
                transport=self._transport,
                resend=self._resend,
            )
        return response

    def _resend(self, token: str) -> HttpResponse:
        answer = self._exchange(token, None, None)
        return HttpResponse(answer.status, RawHeaders(answer.head), answer.body, answer.elapsed_ms)

    def _exchange(self, token: str, intended_at: float | None, on_wire: OnWire | None) -> _Timed:
        request = self._request(token)
        started_at = _epoch()
        told: list[float] = []
        written = None
        if on_wire is not None and intended_at is not None:

            def written(at: float) -> None:
                told.append(at)
                on_wire(intended_at, at)

        try:
            answer = self.wire.exchange(request, written)
        except OSError as exc:
            now = _clock()
            if written is not None and not told:
                written(now)  # never on the wire: counted as sent now
            raise self._failed(exc, intended_at, started_at, now) from None
        return _Timed(answer, self._record(answer, intended_at, started_at))

    def _failed(
        self, exc: OSError, intended_at: float | None, started_at: float, now: float
    ) -> AuthzError:
        """The failed row of a call that got no answer, and the core's error for it."""
        error = unreachable(NAME, self.url, exc, self.wire.tls)
        since = now if intended_at is None else min(intended_at, now)
        self._row((now - since) * 1000.0, 0.0, 0, error, started_at, sent=None)
        return error

    def _record(self, answer: Answer, intended_at: float | None, started_at: float) -> float:
        """An answered call's row: timed from its intended start (or its write); its
        service time (ms)."""
        service = (answer.ended - answer.write_started) * 1000.0
        if intended_at is None:
            response_time = service
        else:
            response_time = (answer.ended - min(intended_at, answer.write_started)) * 1000.0
        status = answer.status
        failure = None
        if status != 200:
            verdict = locust_verdict(HttpResponse(status, RawHeaders(answer.head), answer.body))
            failure = None if verdict is None else RequestFailure(verdict)
        self._row(
            response_time,
            service,
            len(answer.body),
            failure,
            started_at,
            sent=len(self.body),
            answered_at=started_at + (answer.ended - answer.write_started),
        )
        return service

    def _row(
        self,
        response_time: float,
        service: float,
        length: int,
        exception: BaseException | None,
        started_at: float,
        *,
        sent: int | None,
        answered_at: float | None = None,
    ) -> None:
        context: dict[str, float] = {SERVICE_MS: service}
        if sent is not None:
            context[SENT_BYTES] = sent
        if answered_at is not None:
            context[ANSWERED_AT] = answered_at
        self._fire(
            request_type="POST",
            name=NAME,
            response_time=response_time,
            response_length=length,
            exception=exception,
            context=context,
            start_time=started_at,
            url=self.url,
        )

    def close(self) -> None:
        self.wire.close()


class SentCalls(Protocol):
    """Where a call written by the schedule (:meth:`OpenAuthorize.send_now`) ends: answered
    (a 200: its place among the calls in flight freed, its row held to be told), or a
    greenlet given to end it (:meth:`OpenAuthorize.finish`)."""

    def answered(self, sent: Sent, answer: Answer) -> None: ...

    def go_on(self, sent: Sent, outcome: int) -> None: ...


class Sent:
    """A call :meth:`OpenAuthorize.send_now` wrote, held by the answer collector."""

    __slots__ = ("access", "call", "calls", "flight", "intended_at", "started_at")

    def __init__(
        self,
        call: OpenAuthorize,
        calls: SentCalls,
        flight: InFlight,
        access: AccessToken,
        intended_at: float,
        started_at: float,
    ) -> None:
        self.call, self.calls, self.flight, self.access = call, calls, flight, access
        self.intended_at, self.started_at = intended_at, started_at

    def collected(self, outcome: int) -> None:
        """Its answer came (a 200 ends it here), it was let go, or its time ran out."""
        if outcome == READY:
            call = self.call
            try:
                answer = call.wire.read_now(self.flight)
            except Exception:  # not an answer as expected: the usual read says what
                answer = None
            if answer is not None and answer.status == 200:
                self.calls.answered(self, answer)
                return
        self.calls.go_on(self, outcome)

    def tell(self, answer: Answer) -> None:
        """Its row, for its answer (a 200)."""
        self.call._record(answer, self.intended_at, self.started_at)


class HeldRows:
    """The rows of the calls the schedule ended itself, told (Locust's request event) a
    batch at a time, at a wake with room before its next start.

    Why: told right after the wake that read its answer, a row costs several times what it
    costs told among others (the wake left the caches cold): about a tenth of a request at
    2,000/s. Each row's times were taken when its answer came, and the second it counts in
    is its answer's (:data:`ANSWERED_AT`), so holding it changes no measurement; Locust's
    own per-second count sees it up to :data:`ROWS_HELD_S` later."""

    def __init__(self) -> None:
        self._rows: list[tuple[Sent, Answer]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, sent: Sent, answer: Answer) -> None:
        self._rows.append((sent, answer))

    def tell(self, until: float) -> None:
        """Tell the held rows once there are :data:`ROWS_TOLD_TOGETHER` or the first has
        waited :data:`ROWS_HELD_S`, until ``until`` (``perf_counter``) comes; never more than
        :data:`ROWS_TOLD_TOGETHER` stay held (a schedule with no room still tells them)."""
        rows = self._rows
        if not rows or (
            len(rows) < ROWS_TOLD_TOGETHER and _clock() - rows[0][0].intended_at < ROWS_HELD_S
        ):
            return
        least, told = len(rows) - ROWS_TOLD_TOGETHER, 0
        try:
            for sent, answer in rows:
                if told >= least and _clock() > until:
                    break
                told += 1
                sent.tell(answer)
        finally:  # a row whose telling raised is not told twice
            del rows[:told]

    def tell_all(self) -> None:
        """Tell every held row (the schedule ended, or was stopped)."""
        rows, self._rows = self._rows, []
        for sent, answer in rows:
            sent.tell(answer)


HELD_ROWS = HeldRows()  # this process's (one schedule per Locust process)


class _Timed:
    """An answer and its service time (ms)."""

    __slots__ = ("body", "elapsed_ms", "head", "status")

    def __init__(self, answer: Answer, elapsed_ms: float) -> None:
        self.status, self.head, self.body = answer.status, answer.head, answer.body
        self.elapsed_ms = elapsed_ms


class Scheduled(PreparingTransport):
    """A transport lent to one scheduled call: its first ``authorize`` request goes out
    timed from ``intended_at`` (told to ``on_wire`` when sent), every other request as
    the user's own ``transport`` sends it."""

    def __init__(self, transport: Any, intended_at: float, on_wire: OnWire | None = None) -> None:
        self._transport = transport
        self.intended_at: float | None = intended_at
        self._on_wire = on_wire

    def send(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
    ) -> HttpResponse:
        intended_at = self.intended_at
        if name != SCHEDULED_REQUEST or intended_at is None:
            response: HttpResponse = self._transport.send(method, url, name, headers, data)
            return response
        self.intended_at = None  # one scheduled request per call
        if self._on_wire is not None:
            self._on_wire(intended_at, _clock())
        scheduled: HttpResponse = self._transport.send(
            method, url, name, headers, data, intended_at=intended_at
        )
        return scheduled

    def unsent(self, now: float) -> None:
        """The call ended before its scheduled request went out: ``on_wire`` told now."""
        if self.intended_at is not None and self._on_wire is not None:
            self._on_wire(self.intended_at, now)
        self.intended_at = None


__all__ = [
    "ANSWERED_AT",
    "HELD_ROWS",
    "NAME",
    "ROWS_HELD_S",
    "ROWS_TOLD_TOGETHER",
    "SCHEDULED_REQUEST",
    "SERVICE_MS",
    "HeldRows",
    "OnWire",
    "OpenAuthorize",
    "Scheduled",
    "Sent",
    "SentCalls",
]
