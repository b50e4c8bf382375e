"""An AuthZEN load test's calls: one evaluation per call, or ``--batch N`` evaluations over
the evaluations endpoint, each body built once per user (a Bearer token added when a token
method is configured) and its answer read just enough to count its decisions beside the
call's row. Free of locust: the process's :class:`AuthzenState`, a user's
:class:`EvaluationTasks` and the process's :data:`COUNTS` (counters travel with the token
counters, the per-decision histogram with the latency histograms, into ``decisions``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import requests
from hdrh.histogram import HdrHistogram

from authzkit.client.transport import HttpResponse, RequestFailure, request_headers, transport_for
from authzkit.loadtest.record.histograms import (
    HIGHEST_US,
    LOWEST_US,
    encode,
    merge,
    new_histogram,
    percentiles,
)
from authzkit.wire.authzen import (
    ACCESS_EVALUATION_ENDPOINT,
    ACCESS_EVALUATIONS_ENDPOINT,
    DEFAULT_SEMANTIC,
    EVALUATION_PATH,
    EVALUATIONS_PATH,
    REQUEST_ID_HEADER,
    SEMANTICS,
    decision_problem,
    evaluations_request,
)
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import AUTHZEN, SANDBOX_WORLD_PATH
from authzkit.wire.tls import TlsSettings
from authzkit.wire.variables import parse_range

if TYPE_CHECKING:
    from authzkit.client.token import TokenProvider

OUTCOME_ROW = ("OUTCOME", "unexpected")  # a 200 that is no answer to what was asked
ENTITY_VARIABLES = (
    "AUTHZKIT_SUBJECT_ID",
    "AUTHZKIT_RESOURCE_ID",
    "AUTHZKIT_RESOURCE_TYPE",
)
Request = dict[str, Any]  # one evaluation: subject, action, resource
OnWire = Callable[[float, float], Any]


@dataclass
class EvaluationCounts:
    """One process's decisions so far (totals): what its calls were answered."""

    active: bool = False  # an AuthZEN run: the counters join the token counters
    calls: int = 0  # calls answered with decisions
    undecided: int = 0  # calls that got no readable decision (a failure row each)
    authorized: int = 0
    denied: int = 0
    decision_us: int = 0  # the answered calls' latency, summed (µs)
    # each answered call's latency / its n decisions, counted n times (µs); a worker's
    # since its last report, the master's (or a lone process's) of the whole run
    per_decision: HdrHistogram = field(default_factory=new_histogram, repr=False)

    def record(self, authorized: int, decided: int, elapsed_us: int) -> None:
        """One answered call: ``decided`` decisions (``authorized`` of them) in
        ``elapsed_us``; one histogram record, whatever the batch."""
        self.calls += 1
        self.authorized += authorized
        self.denied += decided - authorized
        self.decision_us += elapsed_us
        each = min(max(round(elapsed_us / max(decided, 1)), LOWEST_US), HIGHEST_US)
        self.per_decision.record_value(each, decided)

    def reset(self) -> None:
        """Forget the decisions so far (Locust's stats were reset: ``--reset-stats``)."""
        self.calls = self.undecided = self.authorized = self.denied = self.decision_us = 0
        self.per_decision = new_histogram()

    def drain(self) -> str | None:
        """The per-decision histogram recorded since the last drain, encoded (None when
        empty), then forgotten: what a worker sends with each report."""
        found = self.per_decision
        if not found.get_total_count():
            return None
        self.per_decision = new_histogram()
        return encode(found)

    def add_encoded(self, text: str | None) -> None:
        """Merge a worker's :meth:`drain` (the master's side; exact, counts add up)."""
        if text:
            self.per_decision = merge([self.per_decision, text])

    def as_counters(self) -> dict[str, int]:
        """The counters a process reports (empty unless an AuthZEN run)."""
        if not self.active:
            return {}
        return {
            "decided_calls": self.calls,
            "undecided_calls": self.undecided,
            "authorized": self.authorized,
            "denied": self.denied,
            "decision_us": self.decision_us,
        }


COUNTS = EvaluationCounts()  # this process's (one per Locust process)


def decision_summary(
    counters: Sequence[Mapping[str, int]], per_decision: HdrHistogram | None = None
) -> dict[str, Any] | None:
    """``summary.json``'s ``decisions``, summed over the processes' counters, with
    ``latency_us_per_decision`` (count, p50 … max) from ``per_decision``, the processes'
    per-decision histograms merged; None for a run that sent no evaluations (the draft's)."""
    if not any("authorized" in c for c in counters):
        return None

    def total(key: str) -> int:
        return sum(int(c.get(key, 0)) for c in counters)

    calls, count = total("decided_calls"), total("authorized") + total("denied")
    return {
        "count": count,
        "authorized": total("authorized"),
        "denied": total("denied"),
        "calls": calls,
        "undecided_calls": total("undecided_calls"),
        "per_call": count / calls if calls else 0.0,
        "mean_us_per_decision": total("decision_us") / count if count else None,
        "latency_us_per_decision": percentiles(
            per_decision if per_decision is not None else new_histogram()
        ),
    }


@dataclass(frozen=True)
class AuthzenState:
    """What every user of one process shares on an AuthZEN PDP."""

    base_url: str
    evaluation_url: str
    evaluations_url: str
    requests: tuple[Request, ...]  # the evaluations the users cycle through
    batch: int | None  # None: one evaluation per call
    semantic: str
    timeout: float
    wait: tuple[float, float]
    tls: TlsSettings = field(default_factory=TlsSettings)
    sandbox: bool = False
    token_provider: TokenProvider | None = None  # a token method configured: Bearer tokens

    def items(self, number: int) -> list[Request]:
        """User ``number``'s evaluations: the next ``batch`` (or one) of :attr:`requests`."""
        size = self.batch or 1
        found = self.requests
        return [found[(number * size + i) % len(found)] for i in range(size)]

    def body(self, number: int) -> dict[str, Any]:
        """User ``number``'s request body: one evaluation, or an evaluations request."""
        items = self.items(number)
        if self.batch is None:
            return dict(items[0])
        return evaluations_request(items, semantic=self.semantic)

    def url(self) -> str:
        """The endpoint the users call."""
        return self.evaluation_url if self.batch is None else self.evaluations_url

    @property
    def row(self) -> str:
        """The calls' row name: ``evaluation`` or ``evaluations``."""
        return "evaluation" if self.batch is None else "evaluations"


def is_authzen(options: Any) -> bool:
    """True when the Locust process runs an AuthZEN load test (``--dialect authzen``)."""
    return str(getattr(options, "dialect", "") or "") == AUTHZEN


def _entity(found: Mapping[str, Any]) -> dict[str, Any]:
    return {k: found[k] for k in ("type", "id", "properties") if k in found}


def _world_requests(world: Mapping[str, Any], action: str | None) -> list[Request]:
    """Every (subject, action, resource) of an AuthZEN sandbox's world, in its order."""
    subjects = [_entity(s) for s in world.get("subjects") or ()]
    resources = [_entity(r) for r in world.get("resources") or ()]
    names = [action] if action else [str(a["name"]) for a in world.get("actions") or ()]
    return [
        {"subject": s, "action": {"name": a}, "resource": r}
        for s, a, r in itertools.product(subjects, names, resources)
    ]


def configured_request(settings: Settings, action: str | None) -> Request | None:
    """The one evaluation ``AUTHZKIT_SUBJECT_*``/``RESOURCE_*`` and the action name; None
    when one of them is missing."""
    if not (settings.subject_id and settings.resource_id and settings.resource_type and action):
        return None
    subject: dict[str, Any] = {"type": settings.subject_type or "user", "id": settings.subject_id}
    resource: dict[str, Any] = {"type": settings.resource_type, "id": settings.resource_id}
    if settings.subject_properties:
        subject["properties"] = dict(settings.subject_properties)
    if settings.resource_properties:
        resource["properties"] = dict(settings.resource_properties)
    return {"subject": subject, "action": {"name": action}, "resource": resource}


def sandbox_world(base_url: str, timeout: float, tls: TlsSettings) -> Mapping[str, Any] | None:
    """The world of the AuthZEN sandbox at ``base_url``; None for any other PDP."""
    try:
        found = requests.get(
            base_url.rstrip("/") + SANDBOX_WORLD_PATH, timeout=timeout, **tls.requests_options()
        )
        world = found.json() if found.status_code == 200 else None
    except (requests.RequestException, ValueError):
        return None
    if not isinstance(world, Mapping) or not isinstance(world.get("subjects"), list):
        return None
    return world


def load_requests(
    settings: Settings, base_url: str, action: str | None
) -> tuple[list[Request], bool]:
    """The evaluations a load test sends, and whether they came from a sandbox's world:
    ``AUTHZKIT_SUBJECT_*``/``RESOURCE_*`` with the action when all are set, else every
    combination of the AuthZEN sandbox's world; a :class:`ConfigError` naming the
    variables when neither is there."""
    configured = configured_request(settings, action)
    if configured is not None:
        return [configured], False
    world = sandbox_world(base_url, settings.timeout, settings.tls)
    found = _world_requests(world, action) if world is not None else []
    if not found:
        raise ConfigError(
            f"{base_url} is no AuthZEN sandbox of authzkit's: set {', '.join(ENTITY_VARIABLES)} "
            f"(and AUTHZKIT_SUBJECT_TYPE, _PROPERTIES as needed) and --action or "
            f"AUTHZKIT_PLAIN_ACTION: what each evaluation asks"
        )
    return found, True


def _endpoints(base_url: str, settings: Settings) -> tuple[str, str]:
    """The evaluation and evaluations URLs, from the PDP's metadata (checked) when it
    publishes one, else the default paths."""
    from authzkit.client.facade import AuthzClient

    client = AuthzClient(
        base_url=base_url, dialect=AUTHZEN, timeout=settings.timeout, tls=settings.tls
    )
    try:
        metadata = client.authzen.metadata()
        return metadata.url(ACCESS_EVALUATION_ENDPOINT), metadata.url(ACCESS_EVALUATIONS_ENDPOINT)
    except ConfigError:
        raise  # a refused document (the mix-up defence) is never used
    except AuthzError:  # no answer to the metadata now: the default paths
        return base_url + EVALUATION_PATH, base_url + EVALUATIONS_PATH
    finally:
        client.close()


def build_authzen_state(
    options: Any, host: str | None, settings: Settings | None = None
) -> AuthzenState:
    """Everything one Locust process shares on an AuthZEN PDP, from its options
    (``--action``, ``--batch``, ``--semantic``, ``--wait-time``), ``host`` and
    ``AUTHZKIT_*``; a :class:`ConfigError` saying what is missing."""
    settings = settings if settings is not None else Settings.from_env()
    base_url = (host or settings.base_url or "").rstrip("/")
    if not base_url:
        raise ConfigError("no PDP URL: pass --host or set AUTHZKIT_BASE_URL")
    action = settings.chosen_action(
        "plain", getattr(options, "action", None) or None, sandbox=False
    )
    found, sandbox = load_requests(settings, base_url, action)
    batch = getattr(options, "batch", None)
    semantic = str(getattr(options, "semantic", None) or DEFAULT_SEMANTIC)
    if semantic not in SEMANTICS:
        raise ConfigError(f"--semantic {semantic}: not one of {', '.join(SEMANTICS)}")
    evaluation, evaluations = _endpoints(base_url, settings)
    from authzkit.loadtest.record.context import configured_token_provider

    provider = configured_token_provider(options, settings, base_url)
    COUNTS.active = True
    return AuthzenState(
        base_url=base_url,
        evaluation_url=evaluation,
        evaluations_url=evaluations,
        requests=tuple(found),
        batch=int(batch) if batch else None,
        semantic=semantic,
        timeout=settings.timeout,
        wait=parse_range("--wait-time", getattr(options, "wait_time", None), unit="seconds"),
        tls=settings.tls,
        sandbox=sandbox,
        token_provider=provider,
    )


def decisions_of(answer: Any, batch: bool) -> list[bool] | str:
    """The decisions of an answer, in order, or why it holds none."""
    if not batch:
        problem = decision_problem(answer)
        return problem if problem is not None else [bool(answer["decision"])]
    found = answer.get("evaluations") if isinstance(answer, Mapping) else None
    if not isinstance(found, list) or not found:
        return "the answer has no evaluations array"
    decisions = []
    for one in found:
        problem = decision_problem(one)
        if problem is not None:
            return problem
        decisions.append(bool(one["decision"]))
    return decisions


class EvaluationTasks:
    """One user's AuthZEN calls (the tasks a user class runs, as
    :class:`~authzkit.loadtest.record.tasks.UserTasks` for the draft)."""

    def __init__(
        self, state: AuthzenState, *, session: Any, number: int, fire: Callable[..., Any]
    ) -> None:
        self.state = state
        self.transport: Any = transport_for(session, timeout=state.timeout, tls=state.tls)
        self.url = state.url()
        self.name = state.row
        self.asked = len(state.items(number))
        self.data = json.dumps(state.body(number), separators=(",", ":")).encode()
        self.headers = request_headers(None, True)
        self.provider = state.token_provider
        self._ids = (f"authzkit-locust-{number}-{n}" for n in itertools.count())
        self._fire = fire

    def wait_time(self) -> float:
        """Seconds of think time before the next task (``--wait-time``; zero by default)."""
        low, high = self.state.wait
        return low if low == high else random.uniform(low, high)

    def prepare(self, *, challenge: bool) -> None:
        """Fetch the token (when one is sent) before a schedule starts, so the first calls
        do not all wait for it and go out together; a failure is left for the calls."""
        if self.provider is not None:
            with contextlib.suppress(AuthzError):
                self.provider.token(self.transport)

    def close(self) -> None:
        """Nothing kept open of its own (the user's transport is closed by the user)."""

    def authorize_once(self) -> None:
        """One call (an evaluation, or the batch); its decisions counted."""
        self._call(time.perf_counter(), None)

    def scheduled(
        self, intended_at: float, on_wire: OnWire | None = None, *, challenge: bool = False
    ) -> None:
        """One open-model call meant to start at ``intended_at``, timed from it."""
        self._call(intended_at, on_wire, scheduled=True)

    def challenge_round_trip(self, **_: Any) -> None:
        raise ConfigError("an AuthZEN PDP has no challenge round trip")

    def _call(self, started: float, on_wire: OnWire | None, *, scheduled: bool = False) -> None:
        sent = next(self._ids)
        headers = {**self.headers, REQUEST_ID_HEADER: sent}
        provider, token = self.provider, None
        try:
            if provider is not None:  # the token row is the provider's own
                try:
                    token = provider.token(self.transport)
                except AuthzError:
                    if on_wire is not None:
                        on_wire(started, time.perf_counter())  # never sent: as sent now
                    raise
                headers["Authorization"] = "Bearer " + token
            if scheduled:
                if on_wire is not None:
                    on_wire(started, time.perf_counter())
                response = self.transport.send(
                    "POST", self.url, self.name, headers, self.data, intended_at=started
                )
            else:
                response = self.transport.send("POST", self.url, self.name, headers, self.data)
            if response.status == 401 and token is not None and provider is not None:
                # the client's policy: one new token, one resend (the 401 is a failure row)
                headers["Authorization"] = (
                    "Bearer " + provider.replace_rejected(token, self.transport).value
                )
                response = self.transport.send("POST", self.url, self.name, headers, self.data)
        except AuthzError:
            COUNTS.undecided += 1  # the transport (or the token provider) marked its row failed
            return
        self._count(response, sent, started)

    def _count(self, response: HttpResponse, sent: str, started: float) -> None:
        if response.status != 200:
            COUNTS.undecided += 1  # a failure row of the transport's
            return
        echoed = response.headers.get(REQUEST_ID_HEADER)
        if echoed is not None and echoed != sent:
            return self._unexpected(f"{REQUEST_ID_HEADER} {echoed!r} answers another request")
        answer = response.body()
        found = decisions_of(answer, self.state.batch is not None)
        if isinstance(found, str):
            return self._unexpected(found)
        if len(found) > self.asked:
            return self._unexpected(f"{len(found)} answers to {self.asked} evaluations")
        COUNTS.record(sum(found), len(found), round((time.perf_counter() - started) * 1e6))

    def _unexpected(self, why: str) -> None:
        COUNTS.undecided += 1
        self._fire(
            request_type=OUTCOME_ROW[0],
            name=OUTCOME_ROW[1],
            response_time=0.0,
            response_length=0,
            exception=RequestFailure(f"{self.name}: {why}"),
            context={},
        )


def tasks_for(state: Any, *, session: Any, number: int, fire: Callable[..., Any]) -> Any:
    """A user's tasks on the process's state: AuthZEN calls, else the draft's."""
    if isinstance(state, AuthzenState):
        return EvaluationTasks(state, session=session, number=number, fire=fire)
    from authzkit.loadtest.record.tasks import UserTasks

    return UserTasks(state, session=session, number=number, fire=fire)


def add_authzen_arguments(parser: Any) -> None:
    """The Locust process's AuthZEN options (``authzkit loadtest`` sets them)."""
    parser.add_argument("--dialect", default="", help="authzen: send AuthZEN evaluations")
    parser.add_argument("--batch", type=int, default=None, help="evaluations per call")
    parser.add_argument("--semantic", default="", help="the evaluations semantic")


__all__ = [
    "COUNTS",
    "OUTCOME_ROW",
    "AuthzenState",
    "EvaluationCounts",
    "EvaluationTasks",
    "add_authzen_arguments",
    "build_authzen_state",
    "configured_request",
    "decision_summary",
    "decisions_of",
    "is_authzen",
    "load_requests",
    "sandbox_world",
    "tasks_for",
]
