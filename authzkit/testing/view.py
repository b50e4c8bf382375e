"""``authz``: one test's view of a sandbox, and what the test expects it to receive.

It reads the sandbox's record as :class:`Request` summaries; ``authz.expect(...)`` is
checked when the test ends, and strict mode fails a test on a request nothing expected
(docs/internals.md, "One test's view").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from authzkit.testing import authzen
from authzkit.wire.spec import AUTHZEN

if TYPE_CHECKING:
    from authzkit.client.facade import AuthzClient
    from authzkit.sandbox.authzen.world import AuthzenWorld
    from authzkit.sandbox.received import Received
    from authzkit.sandbox.world import World
    from authzkit.testing.sandboxes import AuthzSandbox

PLUMBING = ("token", "keys")
AUTHORIZED = "authorized"


def outcome_of(received: Received) -> str:
    """``authorized`` (a 2xx of authorize; on AuthZEN an evaluation's decision,
    ``authorized`` or ``denied``), ``ok`` (any other 2xx), or the error's type: the
    service's ``srn:error:*`` or an OAuth 2.0 ``error``, else ``HTTP <status>``."""
    from authzkit.wire.spec import error_type

    body = received.response_body
    if 200 <= received.status < 300:
        if received.endpoint == "authorize":
            return AUTHORIZED
        return authzen.decision(received) or "ok"
    kind = error_type(body)
    if kind is None and isinstance(body, dict) and isinstance(body.get("error"), str):
        kind = body["error"]
    return kind or f"HTTP {received.status}"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Request:
    """One request the sandbox received, as a test asks about it."""

    endpoint: str
    method: str
    path: str
    status: int
    outcome: str
    action: str | None
    resource_id: str | None
    resource_type: str | None
    subject: str | None
    received: Received

    @classmethod
    def of(cls, received: Received) -> Request:
        if received.endpoint in authzen.ENDPOINTS:
            asked = authzen.asked(received)
            return cls(
                received.endpoint,
                received.method,
                urlsplit(received.url).path,
                received.status,
                outcome_of(received),
                asked["action"],
                asked["resource_id"],
                asked["resource_type"],
                asked["subject"],
                received,
            )
        body = _object(received.request_body)
        action = _object(body.get("action"))
        context = _object(action.get("context"))

        def text(value: Any) -> str | None:
            return value if isinstance(value, str) else None

        return cls(
            received.endpoint,
            received.method,
            urlsplit(received.url).path,
            received.status,
            outcome_of(received),
            text(action.get("name")),
            text(context.get("resource_id")),
            text(context.get("resource_type")),
            received.subject,
            received,
        )

    def describe(self) -> str:
        """One line: ``POST /…/authorize action=x resource=y subject=alice -> 200
        authorized``."""
        parts = [self.method, self.path]
        parts += [
            f"{name}={value}"
            for name, value in (
                ("action", self.action),
                ("resource", self.resource_id),
                ("subject", self.subject),
            )
            if value is not None
        ]
        return f"{' '.join(parts)} -> {self.status} {self.outcome}"


def decision_endpoint(dialect: str) -> str:
    """The endpoint of one decision: ``authorize``, or ``evaluation`` on AuthZEN."""
    return authzen.EVALUATION if dialect == AUTHZEN else "authorize"


def _same_outcome(wanted: str, found: str) -> bool:
    """``unauthorized`` matches ``srn:error:unauthorized``; a full type matches itself."""
    return found == wanted or found.rsplit(":", 1)[-1] == wanted


@dataclass
class Expectation:
    """Requests the test expects: every filter given must match; ``times`` exactly that
    many (None: at least one)."""

    endpoint: str | None = None
    action: str | None = None
    resource_id: str | None = None
    subject: str | None = None
    outcome: str | None = None
    status: int | None = None
    times: int | None = None

    def matches(self, request: Request) -> bool:
        return (
            (self.endpoint is None or request.endpoint == self.endpoint)
            and (self.action is None or request.action == self.action)
            and (self.resource_id is None or request.resource_id == self.resource_id)
            and (self.subject is None or request.subject == self.subject)
            and (self.outcome is None or _same_outcome(self.outcome, request.outcome))
            and (self.status is None or request.status == self.status)
        )

    def describe(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}"
            for name, value in (
                ("endpoint", self.endpoint),
                ("action", self.action),
                ("resource_id", self.resource_id),
                ("subject", self.subject),
                ("outcome", self.outcome),
                ("status", self.status),
                ("times", self.times),
            )
            if value is not None
        )
        return f"expect({fields})"

    def problem(self, requests: Sequence[Request]) -> str | None:
        """Why the received requests do not meet this expectation, or None."""
        count = sum(1 for r in requests if self.matches(r))
        if self.times is None and count == 0:
            return f"{self.describe()}: no such request was received"
        if self.times is not None and count != self.times:
            return f"{self.describe()}: {count} such request{'' if count == 1 else 's'} received"
        return None


class AuthzView:
    """``authz``: the sandbox a test uses (reset around it), what it received, and the
    test's expectations of it. Attributes of :class:`AuthzSandbox` (``base_url``,
    ``client_id``, ``session_token`` …) are available here too, and :attr:`client`."""

    def __init__(self, sandbox: AuthzSandbox, *, strict: bool = False) -> None:
        self.sandbox = sandbox
        self.strict = strict
        self.expectations: list[Expectation] = []
        self._client: AuthzClient | None = None

    @property
    def client(self) -> AuthzClient:
        """This test's :class:`~authzkit.AuthzClient` of the sandbox (the ``authz_client``
        fixture): the demo client's credentials, or on AuthZEN a PEP's client with none;
        made on first use, closed when the test ends."""
        if self._client is None:
            self._client = self.sandbox.client()
        return self._client

    def close(self) -> None:
        """Close :attr:`client` (the plugin does, when the test ends)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    # -- the sandbox's face (see AuthzSandbox) ----------------------------------------------
    @property
    def base_url(self) -> str:
        return self.sandbox.base_url

    @property
    def auth_url(self) -> str:
        return self.sandbox.auth_url

    @property
    def issuer(self) -> str | None:
        return self.sandbox.issuer

    @property
    def dialect(self) -> str:
        return self.sandbox.dialect

    @property
    def client_id(self) -> str:
        return self.sandbox.client_id

    @property
    def client_secret(self) -> str | None:
        return self.sandbox.client_secret

    @property
    def client_key_pem(self) -> str | None:
        return self.sandbox.client_key_pem

    @property
    def world(self) -> World | AuthzenWorld:
        return self.sandbox.world

    def session_token(self, subject: str | None = None, ttl: float | None = None) -> str:
        """A fresh session token for ``subject``, valid until this test ends (whatever the
        marker's ``token_ttl``, which is the access token's lifetime), or for ``ttl`` seconds
        when given; None: the world's default subject (the first that owns a resource:
        ``alice`` in the demo world), so a test on a world of its own needs no name either.
        Not on AuthZEN, whose requests name their subject."""
        return self.sandbox.session_token(subject, ttl)

    def _authzen_world(self, what: str) -> AuthzenWorld:
        from authzkit.sandbox.authzen.world import AuthzenWorld
        from authzkit.wire.errors import ConfigError

        world = self.world
        if not isinstance(world, AuthzenWorld):
            raise ConfigError(
                f"authz.{what}() names an AuthZEN entity; this sandbox speaks {self.dialect} "
                f"(@pytest.mark.authz(dialect='authzen'))"
            )
        return world

    def subject(self, id: str) -> dict[str, Any]:
        """The AuthZEN world's subject ``id`` as a request names it (``type``, ``id``,
        ``properties``), for ``authz.client.evaluate(..., subject=...)``."""
        return authzen.entity_json(self._authzen_world("subject").subjects, "subject", id)

    def resource(self, id: str) -> dict[str, Any]:
        """The AuthZEN world's resource ``id`` as a request names it (see :meth:`subject`)."""
        return authzen.entity_json(self._authzen_world("resource").resources, "resource", id)

    def stats(self) -> dict[str, Any]:
        """The ``/sandbox/v1/stats`` counters of this test."""
        return self.sandbox.stats()

    def reset(self) -> None:
        """Reset the sandbox now (sessions, challenges, counters, record, faults' schedule);
        the expectations stay."""
        self.sandbox.reset()

    def env(self) -> dict[str, str]:
        return self.sandbox.env()

    # -- what was received ------------------------------------------------------------------
    @property
    def requests(self) -> list[Request]:
        """Every request received in this test, oldest first."""
        return [Request.of(r) for r in self.sandbox.received()]

    def __iter__(self) -> Iterator[Request]:
        return iter(self.requests)

    def received(self, endpoint: str | None = None, **filters: Any) -> list[Request]:
        """The requests matching ``expect``'s filters (without ``times``)."""
        wanted = Expectation(endpoint, **filters)
        return [r for r in self.requests if wanted.matches(r)]

    @property
    def token_calls(self) -> int:
        """How many requests reached the token endpoint."""
        return sum(1 for r in self.requests if r.endpoint == "token")

    @property
    def actions(self) -> list[str]:
        """The action of each authorize request (on AuthZEN each evaluation), in order."""
        endpoint = decision_endpoint(self.dialect)
        return [r.action or "?" for r in self.requests if r.endpoint == endpoint]

    @property
    def outcomes(self) -> list[str]:
        """The outcome of each authorize request (``authorized`` or the error type; on
        AuthZEN each evaluation's ``authorized`` or ``denied``, or its error)."""
        endpoint = decision_endpoint(self.dialect)
        return [r.outcome for r in self.requests if r.endpoint == endpoint]

    @property
    def errors(self) -> list[str]:
        """The error type of each refused request, any endpoint, in order."""
        return [r.outcome for r in self.requests if not 200 <= r.status < 300]

    # -- expectations ------------------------------------------------------------------------
    def expect(
        self,
        endpoint: str | None = None,
        *,
        action: str | None = None,
        resource_id: str | None = None,
        subject: str | None = None,
        outcome: str | None = None,
        status: int | None = None,
        times: int | None = None,
    ) -> Expectation:
        """Declare requests the test expects; checked when the test ends (or by
        :meth:`check`). ``endpoint`` is ``authorize`` (the default when an action,
        resource or subject is named), ``token`` or ``keys``; ``outcome`` is
        ``authorized`` or an error type (``unauthorized`` or ``srn:error:unauthorized``).
        On AuthZEN: ``evaluation`` (that default), ``evaluations``, ``search_subject``,
        ``search_resource``, ``search_action`` or ``metadata``, and ``outcome``
        ``authorized`` or ``denied`` for an evaluation."""
        if times is not None and (
            isinstance(times, bool) or not isinstance(times, int) or times < 0
        ):
            raise ValueError(f"times must be a whole number >= 0, got {times!r}")
        if endpoint is None and (action or resource_id or subject):
            endpoint = decision_endpoint(self.dialect)
        expectation = Expectation(endpoint, action, resource_id, subject, outcome, status, times)
        self.expectations.append(expectation)
        return expectation

    def problems(self) -> list[str]:
        """Unmet expectations, then (strict mode) the requests no expectation covers."""
        requests = self.requests
        found = [p for p in (e.problem(requests) for e in self.expectations) if p]
        if self.strict:
            plumbing = authzen.PLUMBING if self.dialect == AUTHZEN else PLUMBING
            bound = {e.endpoint for e in self.expectations}
            unexpected = [
                r
                for r in requests
                if not any(e.matches(r) for e in self.expectations)
                and (r.endpoint not in plumbing or r.endpoint in bound)
                and not r.endpoint.startswith("/auth/realms/")
            ]
            found += [f"unexpected request (strict mode): {r.describe()}" for r in unexpected]
        return found

    def check(self) -> None:
        """Raise :class:`AssertionError` naming every unmet expectation (and, in strict
        mode, every unexpected request); what the sandbox received follows."""
        problems = self.problems()
        if problems:
            raise AssertionError(self.report(problems))

    def report(self, problems: Sequence[str]) -> str:
        """``problems``, then every request received, one a line."""
        received = [f"  {n}. {r.describe()}" for n, r in enumerate(self.requests, 1)]
        return "\n".join(
            ["authz: " + p for p in problems]
            + ["the sandbox received:", *(received or ["  nothing"])]
        )

    def __repr__(self) -> str:
        return f"AuthzView({self.sandbox!r}, strict={self.strict})"


__all__ = [
    "AUTHORIZED",
    "PLUMBING",
    "AuthzView",
    "Expectation",
    "Request",
    "decision_endpoint",
    "outcome_of",
]
