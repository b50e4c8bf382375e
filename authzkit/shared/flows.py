"""Named flows of the service, run step by step: the demo's transcript and the traces.

A flow is a generator of :class:`Step` results, so a caller prints each step as it
completes; the same flows run on the sandbox and on a real environment
(docs/internals.md, "Flows").
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from authzkit.client.answers import pick_answer
from authzkit.client.authorize import request_hash
from authzkit.client.outcomes import ChallengeRequired, describe
from authzkit.shared.connection import Connection
from authzkit.shared.consent import SKIPPED, WrongAnswerPolicy
from authzkit.wire import jwe
from authzkit.wire.errors import AuthzError, ConfigError

USER_AGENT = "authzkit-demo/1.0"


@dataclass(frozen=True)
class Step:
    """One request of a flow as a reader sees it: what, HTTP status, outcome, time."""

    title: str
    status: int | None
    outcome: str
    elapsed_ms: float
    error_type: str | None = None
    expected: bool = True
    detail: str = ""  # the error's own words, kept when a step did not end as expected
    skipped: bool = False  # not sent on purpose (``detail`` says why and how to allow it)


def _timed(
    title: str,
    call: Callable[[], Any],
    summarize: Callable[[Any], str],
    expect_error: str | None = None,
) -> tuple[Step, Any]:
    """Run ``call`` and turn its result or :class:`AuthzError` into a :class:`Step`."""
    started = time.perf_counter()
    try:
        result = call()
    except AuthzError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        expected = expect_error is not None and exc.type == expect_error
        step = Step(
            title,
            exc.status,
            describe(exc),
            elapsed,
            exc.type,
            expected=expected,
            detail="" if expected else exc.message,
        )
        return step, exc
    elapsed = (time.perf_counter() - started) * 1000
    status = 403 if isinstance(result, ChallengeRequired) else 200
    return Step(title, status, summarize(result), elapsed, expected=expect_error is None), result


class FlowRunner:
    """Runs the named flows against one environment, as a subject that owns a resource.

    ``subject`` is a sandbox subject; None (the default) is the environment's own
    (:attr:`Connection.subject <authzkit.shared.connection.Connection.subject>`: the holder of
    ``AUTHZKIT_SUBJECT_TOKEN`` when set, else the world's default subject).
    ``allow_wrong_answers`` is the command's ``--allow-wrong-answers`` (None: not given,
    ``AUTHZKIT_ALLOW_WRONG_ANSWERS`` decides); a sandbox authzkit started needs neither.
    """

    def __init__(
        self,
        connection: Connection,
        subject: str | None = None,
        *,
        allow_wrong_answers: bool | None = None,
    ) -> None:
        self.connection = connection
        self.client = connection.client
        self.named = subject  # what the environment's calls are given (None: its own)
        self.subject = subject if subject is not None else connection.subject  # for output
        self.wrong_answers = WrongAnswerPolicy.for_connection(
            connection, consent=allow_wrong_answers
        )
        self._subject_token: str | None = None

    # One rule for the actions (--action/--challenge-action, AUTHZKIT_*_ACTION; the demo
    # names on the sandbox only), asked when a flow needs one: `trace plain` needs no
    # challenge action.
    @property
    def plain_action(self) -> str:
        return self.connection.action("plain")

    @property
    def challenge_action(self) -> str:
        return self.connection.action("challenge")

    @property
    def subject_token(self) -> str:
        if self._subject_token is None:
            self._subject_token = self.connection.subject_token(self.named)
        return self._subject_token

    def authorize(
        self,
        action: str,
        *,
        resource: tuple[str, str] | None = None,
        subject_token: str | None = None,
        challenge_solution: str | None = None,
    ) -> Any:
        resource_id, resource_type = resource or self.connection.resource(self.named)
        # The body of the front-end request the resource server is deciding about.
        front_end_body = {"action": action, "account": resource_id}
        return self.client.authorize(
            action,
            resource_id=resource_id,
            resource_type=resource_type,
            subject_token=subject_token or self.subject_token,
            user_agent=USER_AGENT,
            user_ip="127.0.0.1",
            request_hash=request_hash(front_end_body),
            challenge_solution=challenge_solution,
        )

    def _challenge(self) -> Iterator[Step | ChallengeRequired]:
        step, challenge = _timed(
            f"authorize {self.challenge_action}",
            lambda: self.authorize(self.challenge_action),
            describe,
        )
        yield step
        if isinstance(challenge, ChallengeRequired):
            yield challenge

    def _answer(self, challenge: ChallengeRequired) -> tuple[str, str]:
        return pick_answer(challenge, self.connection.answers(self.named))

    # -- flows ---------------------------------------------------------------------------

    def plain(self) -> Iterator[Step]:
        """Token, keys, and an action that needs no challenge (200 shape A)."""

        def token() -> str:
            return self.client.access_token()

        provider = self.client.token_provider
        how = (
            "client credentials"
            if provider.client_auth == "draft"
            else f"client credentials, {provider.client_auth}"
        )
        yield _timed(f"token ({how})", token, lambda _: token_line(provider))[0]
        yield _timed(
            "keys (discovery, use=enc)",
            self.client.encryption_key,
            lambda key: f"enc key kid {key.kid[:8]}…",
        )[0]
        yield _timed(
            f"authorize {self.plain_action}", lambda: self.authorize(self.plain_action), describe
        )[0]

    def challenge(self) -> Iterator[Step]:
        """An action that demands a challenge, then the encrypted solution (200 shape B)."""
        challenge = None
        for item in self._challenge():
            if isinstance(item, ChallengeRequired):
                challenge = item
            else:
                yield item
        if challenge is None:
            return
        kind, value = self._answer(challenge)
        solution = self.client.build_solution(challenge.challenge_id, kind, value)
        header = jwe.protected_header(solution)
        yield _timed(
            f"solve with {kind} (JWE {header['alg']}/{header['enc']})",
            lambda: self.authorize(self.challenge_action, challenge_solution=solution),
            describe,
        )[0]

    def _fresh_challenge_then(
        self, title: str, expect: str, solution_for: Callable[[ChallengeRequired], str]
    ) -> Iterator[Step]:
        challenge = None
        for item in self._challenge():
            if isinstance(item, ChallengeRequired):
                challenge = item
        if challenge is None:
            yield Step(title, None, "no challenge was issued", 0.0, expected=False)
            return
        solution = solution_for(challenge)
        action = self.challenge_action
        yield _timed(
            title,
            lambda: self.authorize(action, challenge_solution=solution),
            describe,
            expect_error=expect,
        )[0]

    def unauthenticated(self) -> Iterator[Step]:
        """An invalid subject session token: 401 ``srn:error:unauthenticated``."""
        yield _timed(
            "invalid subject session",
            lambda: self.authorize(self.plain_action, subject_token="not-a-session-token"),
            describe,
            expect_error="srn:error:unauthenticated",
        )[0]

    def unauthorized(self) -> Iterator[Step]:
        """A resource the subject does not own: 403 ``srn:error:unauthorized``."""
        yield _timed(
            "someone else's resource",
            lambda: self.authorize(
                self.plain_action, resource=self.connection.foreign_resource(self.named)
            ),
            describe,
            expect_error="srn:error:unauthorized",
        )[0]

    def bad_jwe_token(self) -> Iterator[Step]:
        """A solution that is not a JWE at all."""
        yield from self._fresh_challenge_then(
            "solution that is not a JWE", "srn:error:bad_jwe_token", lambda c: "this-is-not-a-jwe"
        )

    def unrecognized_key(self) -> Iterator[Step]:
        """A solution encrypted for a key the service does not hold."""
        yield from self._fresh_challenge_then(
            "solution for an unknown key",
            "srn:error:unrecognized_key",
            lambda c: jwe.encrypt(
                jwe.KeyPair.generate(use="enc", size=2048).public_key(),
                {"challenge_id": c.challenge_id, **dict([self._answer(c)])},
            ),
        )

    def wrong_challenge_solution(self) -> Iterator[Step]:
        """A solution payload without ``challenge_id``."""
        yield from self._fresh_challenge_then(
            "solution without challenge_id",
            "srn:error:wrong_challenge_solution",
            lambda c: jwe.encrypt(self.client.encryption_key(), dict([self._answer(c)])),
        )

    def bad_challenge_solution(self) -> Iterator[Step]:
        """A wrong answer of an allowed kind: only where :mod:`authzkit.shared.consent` allows it
        (it may count against a person's PIN); otherwise a skipped step, nothing sent."""
        if not self.wrong_answers.allowed:
            yield Step(
                "wrong answer",
                None,
                SKIPPED,
                0.0,
                skipped=True,
                detail=self.wrong_answers.skip_message(),
            )
            return
        yield from self._fresh_challenge_then(
            "wrong answer",
            "srn:error:bad_challenge_solution",
            lambda c: self.client.build_solution(c.challenge_id, *_wrong(self._answer(c))),
        )

    def challenge_not_found(self) -> Iterator[Step]:
        """A correct answer for a challenge id the service never issued."""
        yield from self._fresh_challenge_then(
            "unknown challenge id",
            "srn:error:challenge_not_found",
            lambda c: self.client.build_solution(str(uuid.uuid4()), *self._answer(c)),
        )

    def errors(self) -> Iterator[Step]:
        """Each error type of the draft provoked once, for real."""
        for name in ERROR_FLOWS:
            yield from getattr(self, name)()

    def demo(self) -> Iterator[Step]:
        """Every flow in order: the transcript of ``authzkit demo``."""
        self.plain_action, self.challenge_action  # noqa: B018 - both named, or nothing is sent
        yield from self.plain()
        yield from self.challenge()
        yield from self.errors()


def token_line(provider: Any) -> str:
    """``Bearer, expiresIn 900 s`` — the type and lifetime as the service sent them."""
    current = provider.current
    token_type = current.token_type if current is not None else "Bearer"
    return f"{token_type}, expiresIn {provider.lifetime} s"


ERROR_FLOWS = (
    "unauthenticated",
    "unauthorized",
    "bad_jwe_token",
    "unrecognized_key",
    "wrong_challenge_solution",
    "bad_challenge_solution",
    "challenge_not_found",
)
FLOWS = ("plain", "challenge", *ERROR_FLOWS, "errors", "demo")
_PLAIN_ONLY = ("plain", "unauthenticated", "unauthorized")
# The kinds of action ("plain", "challenge") each flow sends, so that `trace FLOW` can
# refuse an --action/--challenge-action the flow would never send instead of ignoring it.
FLOW_ACTIONS: dict[str, frozenset[str]] = {
    name: frozenset(
        {"plain"}
        if name in _PLAIN_ONLY
        else {"plain", "challenge"}
        if name in ("errors", "demo")
        else {"challenge"}
    )
    for name in FLOWS
}


def run_flow(runner: FlowRunner, name: str) -> Iterator[Step]:
    """The steps of the flow called ``name`` (one of :data:`FLOWS`)."""
    if name not in FLOWS:
        raise ConfigError(f"unknown flow {name!r}; choose one of {', '.join(FLOWS)}")
    steps: Iterator[Step] = getattr(runner, name)()
    return steps


def _wrong(answer: tuple[str, str]) -> tuple[str, str]:
    """A wrong answer of the same kind (for a TOTP, a code that is never current)."""
    kind, value = answer
    wrong = "000000" if value != "000000" else "111111"
    return kind, wrong if kind in ("pin", "totp") else value + "-wrong"


__all__ = ["ERROR_FLOWS", "FLOWS", "FLOW_ACTIONS", "FlowRunner", "Step", "run_flow", "token_line"]
