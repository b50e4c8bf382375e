"""What one load-test user does per task, free of locust (so it is testable in-process).

:class:`AuthzFlows` holds a user's prepared client and request arguments (built once, at
user start: the hot path is one ``client.authorize`` call) and reports its custom rows
through ``fire``, which takes the keyword arguments of Locust's request event. The HTTP
rows (``token``, ``keys``, ``authorize``, ``authorize:solution``) come from the core's
transport over the user's Locust session, which also marks challenge 403s successes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from authzkit.answers import pick_answer
from authzkit.authorize import request_hash
from authzkit.client import AuthzClient
from authzkit.errors import AuthzError, UnrecognizedKeyError
from authzkit.loadtest_support import Shared
from authzkit.outcomes import Authorized, ChallengeRequired

USER_AGENT = "authzkit-locust"
FLOW_ROW = ("FLOW", "challenge round trip")
JWE_ROW = ("JWE", "build_solution")
UNEXPECTED_ROW = ("OUTCOME", "unexpected")


class FlowFailure(Exception):
    """A flow that did not end as expected; its message names the service's error type."""


def describe(error: AuthzError) -> str:
    """A stable failure text: ``HTTP <status> <type>`` (never a secret, never an id)."""
    if error.type or error.status:
        return " ".join(p for p in (f"HTTP {error.status}" if error.status else "",
                                    error.type or type(error).__name__) if p)
    return f"{type(error).__name__}: {error.message}"


class AuthzFlows:
    """One user's client on the process's shared token provider and key cache."""

    def __init__(self, state: Shared, *, session: Any, number: int,
                 fire: Callable[..., Any]) -> None:
        self.state = state
        self.subject = state.subjects[number % len(state.subjects)]
        self.client = AuthzClient(base_url=state.base_url, auth_url=state.auth_url,
                                  session=session, timeout=state.timeout,
                                  token_provider=state.token_provider, keys=state.keys)
        self.request = {
            "resource_id": self.subject.resource_id,
            "resource_type": self.subject.resource_type,
            "subject_token": self.subject.token.reveal(),
            "user_agent": USER_AGENT,
            "request_hash": request_hash(f"locust user {number}"),
        }
        self._fire = fire

    def wait_time(self) -> float:
        """Seconds of think time before the next task (``--wait-time``; zero by default)."""
        low, high = self.state.wait
        return low if low == high else random.uniform(low, high)

    def authorize_once(self) -> None:
        """One plain authorize; anything but ``authorized`` is a failure row."""
        try:
            outcome = self.client.authorize(self.state.action, **self.request)
        except AuthzError:
            return  # the transport already marked the row failed with the error type
        if outcome.__class__ is not Authorized:
            self._row(UNEXPECTED_ROW, 0.0, FlowFailure(f"{outcome.type} (expected authorized)"))

    def challenge_round_trip(self) -> None:
        """Authorize → 403 challenge → JWE (own row) → authorize with the solution (+ a row
        for the whole flow, failed with the service's error type when any step fails)."""
        started = time.perf_counter()
        failure = None
        action = self.state.challenge_action
        try:
            outcome = self.client.authorize(action, **self.request)
            if not isinstance(outcome, ChallengeRequired):
                raise FlowFailure("authorized without a challenge "
                                  "(expected srn:error:challenge_required)")
            kind, value = pick_answer(outcome, self.subject.answers)
            kid, solution = self._solution(outcome.challenge_id, kind, value)
            try:
                result = self.client.authorize(action, challenge_solution=solution,
                                               **self.request)
            except UnrecognizedKeyError:  # keys rotated: re-fetch once, re-encrypt, resend
                self.client.keys.refresh(stale_kid=kid, transport=self.client.transport)
                kid, solution = self._solution(outcome.challenge_id, kind, value)
                result = self.client.authorize(action, challenge_solution=solution,
                                               **self.request)
            if not isinstance(result, Authorized):
                raise FlowFailure(f"{result.type} again after the solution")
        except AuthzError as exc:
            failure = FlowFailure(describe(exc))
        except FlowFailure as exc:
            failure = exc
        self._row(FLOW_ROW, (time.perf_counter() - started) * 1000.0, failure)

    def _solution(self, challenge_id: int | str, kind: str, value: str) -> tuple[str, str]:
        kid = self.client.encryption_key().kid  # may fetch keys: its own "keys" row, not timed
        started = time.perf_counter()
        error = None
        try:
            return kid, self.client.build_solution(challenge_id, kind, value)
        except AuthzError as exc:
            error = exc
            raise
        finally:
            self._row(JWE_ROW, (time.perf_counter() - started) * 1000.0,
                      FlowFailure(describe(error)) if error else None)

    def _row(self, row: tuple[str, str], millis: float, failure: Exception | None) -> None:
        self._fire(request_type=row[0], name=row[1], response_time=millis, response_length=0,
                   exception=failure, context={})


__all__ = ["FLOW_ROW", "JWE_ROW", "UNEXPECTED_ROW", "USER_AGENT", "AuthzFlows", "FlowFailure",
           "describe"]
