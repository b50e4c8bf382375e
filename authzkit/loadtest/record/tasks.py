"""What one load-test user does per task, free of locust (so it is testable in-process).

:class:`UserTasks` holds a user's prepared client and reports its custom rows;
:class:`PlainCall` is the closed model's plain authorize, a 200 left unread. Scheduled calls
are timed by :mod:`~authzkit.loadtest.record.timing` (docs/internals.md, "A user's task").
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable
from typing import Any

from authzkit.client.answers import pick_answer
from authzkit.client.authorize import parse_outcome, request_hash
from authzkit.client.facade import AuthzClient, EncryptedSolution
from authzkit.client.outcomes import Authorized, ChallengeRequired, describe
from authzkit.client.prepared import PreparedAuthorize
from authzkit.client.transport import HttpResponse
from authzkit.loadtest.record.context import ProcessState
from authzkit.loadtest.record.timing import (
    SERVICE_MS,
    OnWire,
    OpenAuthorize,
    Scheduled,
    Sent,
)
from authzkit.wire.errors import AuthzError

USER_AGENT = "authzkit-locust"
FLOW_ROW = ("FLOW", "challenge round trip")
JWE_ROW = ("JWE", "build_solution")
UNEXPECTED_ROW = ("OUTCOME", "unexpected")


class FlowFailure(Exception):
    """A flow that did not end as expected; its message names the service's error type."""


class PlainCall:
    """One user's plain authorize, prepared: ``client.prepare_authorize`` for the user's
    arguments (:class:`~authzkit.client.prepared.PreparedAuthorize`: what
    ``client.authorize`` sends, the same body bytes, headers and transport, the same token
    provider and 401 policy, built once), without what a load test never reads.

    Why not ``client.authorize`` itself: per request it builds the arguments' cache key,
    looks the body up, and parses every answer into an ``Authorized`` (JSON decoding and a
    dataclass, ~7 µs of a FastHttpUser request's ~250 µs). A user only asks whether the
    answer is a 200: ``authorized`` needs no row, and a 200 whose body is not a decision
    made ``client.authorize`` raise an error the task dropped (the transport had already
    counted the request), so a 200 is left unread. Any other answer is parsed by the
    core's ``parse_outcome`` exactly as before.
    """

    __slots__ = ("call", "response")

    def __init__(self, client: AuthzClient, action: str, request: dict[str, Any]) -> None:
        self.call: PreparedAuthorize = client.prepare_authorize(action, **request)
        self.response: Callable[[], HttpResponse] = self.call.response

    def send(self) -> Authorized | ChallengeRequired | None:
        """``None`` for a 200, else the outcome (or the core's error) of the answer."""
        response = self.response()
        if response.status == 200:
            return None
        return parse_outcome(response)


class UserTasks:
    """One user's client on the process's shared token provider and key cache."""

    def __init__(
        self, state: ProcessState, *, session: Any, number: int, fire: Callable[..., Any]
    ) -> None:
        self.state = state
        self.subject = state.subjects[number % len(state.subjects)]
        self.client = AuthzClient(
            base_url=state.base_url,
            auth_url=state.auth_url,
            session=session,
            timeout=state.timeout,
            token_provider=state.token_provider,
            keys=state.keys,
            tls=state.tls,
        )
        self.request: dict[str, Any] = {
            "resource_id": self.subject.resource_id,
            "resource_type": self.subject.resource_type,
            "subject_token": self.subject.token.reveal(),
            "user_agent": USER_AGENT,
            "request_hash": request_hash(f"locust user {number}"),
        }
        self.plain = PlainCall(self.client, state.action, self.request)
        self._plain_response = self.plain.response  # the hot path, bound once
        self._fire = fire
        self.session = session
        self._open: OpenAuthorize | None = None  # the open model's plain call, when scheduled

    def open_call(self) -> OpenAuthorize:
        """The open model's plain authorize (:class:`~.timing.OpenAuthorize`), built on
        first use: pre-built bytes on kept-alive connections, the same rows."""
        if self._open is None:
            state = self.state
            provider = state.token_provider
            self._open = OpenAuthorize(
                base_url=state.base_url,
                request=self.request,
                action=state.action,
                token_provider=provider,
                transport=self.client.transport,
                fire=self._fire,
                timeout=state.timeout,
                tls=state.tls,
                secrets=provider.credentials.secrets,
            )
        return self._open

    def close(self) -> None:
        """Close the open model's kept-alive connections."""
        if self._open is not None:
            self._open.close()

    def wait_time(self) -> float:
        """Seconds of think time before the next task (``--wait-time``; zero by default)."""
        low, high = self.state.wait
        return low if low == high else random.uniform(low, high)

    def prepare(self, *, challenge: bool) -> None:
        """Fetch what the first call would fetch (the access token; for challenge round
        trips the encryption key) before a schedule starts. Otherwise every call started
        while the first one waits for the token waits too, and they all go out together
        when it comes: a burst at the schedule's start that is the generator's doing, not
        the service's. Rows and failures are reported as usual; a failure here is left for
        the scheduled calls to meet and report."""
        try:
            self.client.access_token()
            if challenge:
                self.client.encryption_key()
        except AuthzError:
            pass

    def authorize_once(self) -> None:
        """One plain authorize; anything but ``authorized`` is a failure row."""
        try:
            response = self._plain_response()
            if response.status == 200:  # PlainCall.send, one call less
                return
        except AuthzError:
            return  # the transport already marked the row failed with the error type
        self._judge(response)

    def _judge(self, response: HttpResponse) -> None:
        """A row when an answer other than a 200 is not ``authorized``."""
        try:
            outcome = parse_outcome(response)
        except AuthzError:
            return  # the transport already marked the row failed with the error type
        if outcome.__class__ is not Authorized:
            kind = outcome.type if isinstance(outcome, ChallengeRequired) else repr(outcome)
            self._row(UNEXPECTED_ROW, 0.0, FlowFailure(f"{kind} (expected authorized)"))

    def scheduled(
        self, intended_at: float, on_wire: OnWire | None = None, *, challenge: bool
    ) -> None:
        """One open-model call meant to start at ``intended_at`` (``time.perf_counter``
        seconds): its ``authorize`` row, or the ``FLOW`` row of a challenge round trip,
        reports the response time from ``intended_at``; ``on_wire`` is told when its
        request is on the wire."""
        if challenge:
            self.challenge_round_trip(intended_at=intended_at, on_wire=on_wire)
            return
        try:
            response = self.open_call()(intended_at, on_wire)
        except AuthzError:
            return  # its row is already a failure with the error type
        if response is not None:
            self._judge(response)

    def finish_sent(self, sent: Sent, outcome: int) -> None:
        """The rest of a call :meth:`send_now` wrote, in a greenlet, judged as
        :meth:`scheduled` judges."""
        try:
            response = self.open_call().finish(sent, outcome)
        except AuthzError:
            return  # its row is already a failure with the error type
        if response is not None:
            self._judge(response)

    def challenge_round_trip(
        self, *, intended_at: float | None = None, on_wire: OnWire | None = None
    ) -> None:
        """Authorize → 403 challenge → JWE (own row) → authorize with the solution (+ a row
        for the whole flow, failed with the service's error type when any step fails; timed
        from ``intended_at`` in the open model, the service time then in its context)."""
        started = time.perf_counter()
        failure = None
        action = self.state.challenge_action
        client, view = self.client, None
        if intended_at is not None:  # this call's own client: its first authorize is timed
            client = copy.copy(client)
            client.transport = view = Scheduled(self.client.transport, intended_at, on_wire)
        try:
            outcome = client.authorize(action, **self.request)
            if not isinstance(outcome, ChallengeRequired):
                raise FlowFailure(
                    "authorized without a challenge (expected srn:error:challenge_required)"
                )
            kind, value = pick_answer(outcome, self.subject.answers)
            result = client.send_solution(
                action, outcome, kind, value, on_encrypted=self._jwe_row, **self.request
            )
            if not isinstance(result, Authorized):
                raise FlowFailure(f"{result.type} again after the solution")
        except AuthzError as exc:
            failure = FlowFailure(describe(exc, http=True))
        except FlowFailure as exc:
            failure = exc
        ended = time.perf_counter()
        if view is not None:
            view.unsent(ended)  # a flow that failed before its authorize: told all the same
        if intended_at is None:
            self._row(FLOW_ROW, (ended - started) * 1000.0, failure)
        else:
            self._row(
                FLOW_ROW,
                (ended - min(intended_at, started)) * 1000.0,
                failure,
                {SERVICE_MS: (ended - started) * 1000.0},
            )

    def _jwe_row(self, encrypted: EncryptedSolution) -> None:
        """The JWE step as its own row (key fetches are the "keys" row, not timed here)."""
        error = encrypted.error
        self._row(
            JWE_ROW,
            encrypted.elapsed_ms,
            FlowFailure(describe(error, http=True)) if error else None,
        )

    def _row(
        self,
        row: tuple[str, str],
        millis: float,
        failure: Exception | None,
        context: dict[str, Any] | None = None,
    ) -> None:
        self._fire(
            request_type=row[0],
            name=row[1],
            response_time=millis,
            response_length=0,
            exception=failure,
            context=context or {},
        )


__all__ = [
    "FLOW_ROW",
    "JWE_ROW",
    "UNEXPECTED_ROW",
    "USER_AGENT",
    "FlowFailure",
    "PlainCall",
    "UserTasks",
]
