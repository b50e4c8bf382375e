"""Locust users built on the core client: the only authzkit module that imports locust.

``import locust`` monkey-patches the process with gevent, so only locustfiles import this
module (``locustfiles/*.py`` and the one ``authzkit loadtest`` writes); tests, the CLI and
notebooks run ``locust`` as a subprocess.

Each user is one resource server calling the service back to back (zero wait unless
``--wait-time`` says otherwise). Everything a process shares is built once, lazily, by the
first user that starts (after gevent patched the process): the settings, ONE token provider
and ONE key cache for all users, and the subjects (minted by a sandbox, or read from
``--subjects FILE``). A user prebuilds its request arguments in ``on_start`` and its task is
one ``client.authorize`` call: the core's transport names the rows (``token``, ``keys``,
``authorize``, ``authorize:solution``) and marks challenge 403s successes.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gevent
import requests
from locust import HttpUser, events, task
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import StopUser
from locust.runners import WorkerRunner

from authzkit.answers import pick_answer
from authzkit.authorize import request_hash
from authzkit.client import AuthzClient
from authzkit.config import Settings
from authzkit.discovery import KeyCache
from authzkit.errors import AuthzError, ConfigError, UnrecognizedKeyError
from authzkit.loadtest_support import (
    DEFAULT_ACTION,
    DEFAULT_CHALLENGE_ACTION,
    SANDBOX_SESSION_TTL,
    Subject,
    parse_wait_time,
    resource_server_credentials,
    subjects_from_csv,
    subjects_from_world,
    threshold_problems,
)
from authzkit.outcomes import Authorized, ChallengeRequired
from authzkit.token import TokenProvider

log = logging.getLogger("authzkit.loadtest")

USER_AGENT = "authzkit-locust"
FLOW_ROW = ("FLOW", "challenge round trip")
JWE_ROW = ("JWE", "build_solution")
UNEXPECTED_ROW = ("OUTCOME", "unexpected")


class FlowFailure(Exception):
    """A flow that did not end as expected; its message names the service's error type."""


# -- command line ------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def add_arguments(parser: Any) -> None:
    """authzkit's options; workers receive them from the master with each spawn message."""
    parser.add_argument("--wait-time", default="0", metavar="S",
                        help="think time between calls: seconds (1) or a range (0.5-2); "
                             "default 0 = throughput mode")
    parser.add_argument("--subjects", default="", metavar="FILE",
                        help="CSV of subject_token, resource_id, resource_type and answers "
                             "(pin, login_password, totp_secret); default: mint from a sandbox")
    parser.add_argument("--auth-url", default="", help="token host (default: the --host)")
    parser.add_argument("--client-id", default="",
                        help="resource_server client id (default: AUTHZKIT_CLIENT_ID, or the "
                             "sandbox's demo client)")
    parser.add_argument("--client-secret", default="", is_secret=True,
                        help="its secret (default: AUTHZKIT_CLIENT_SECRET)")
    parser.add_argument("--action", default=DEFAULT_ACTION, help="action without a challenge")
    parser.add_argument("--challenge-action", default=DEFAULT_CHALLENGE_ACTION,
                        help="action that demands a challenge")
    parser.add_argument("--max-p95-ms", type=float, default=None, include_in_web_ui=False,
                        help="exit code 1 when the aggregated p95 exceeds this")
    parser.add_argument("--max-failure-ratio", type=float, default=None, include_in_web_ui=False,
                        help="exit code 1 when failures / requests exceeds this (0.01 = 1 %%)")
    parser.add_argument("--summary-file", default="", include_in_web_ui=False, metavar="FILE",
                        help="write failures, thresholds and token counters as JSON at exit")


@events.init.add_listener
def _default_host(environment: Any, **_: Any) -> None:
    """``--host`` falls back to AUTHZKIT_BASE_URL."""
    if not environment.host:
        try:
            environment.host = Settings.from_env().base_url
        except ConfigError as exc:
            log.error("authzkit: %s", exc)


# -- per-process shared state ---------------------------------------------------------------------

@dataclass(frozen=True)
class Shared:
    """What every user of one process shares."""

    base_url: str
    auth_url: str
    timeout: float
    token_provider: TokenProvider
    keys: KeyCache
    subjects: tuple[Subject, ...]
    action: str
    challenge_action: str
    wait: tuple[float, float]
    sandbox: bool


_state: dict[str, Any] = {}
_subject_numbers = itertools.count()


def _lock() -> Any:
    # Created on first use, i.e. after gevent patched threading: a cooperative lock.
    return _state.setdefault("lock", threading.Lock())


def _sandbox_world(base_url: str, timeout: float) -> tuple[Any, dict[str, Any] | None]:
    from authzkit.sandbox import SandboxAdmin

    admin = SandboxAdmin(base_url, session=requests.Session(), timeout=timeout)
    try:
        return admin, admin.world()
    except AuthzError as exc:
        return admin, {"_error": str(exc)}


def _build(options: Any, host: str | None) -> Shared:
    settings = Settings.from_env()
    base_url = (host or settings.base_url or "").rstrip("/")
    if not base_url:
        raise ConfigError("no service URL: pass --host or set AUTHZKIT_BASE_URL "
                          "(`authzkit loadtest` starts a sandbox for you)")
    explicit_auth = settings.auth_url if settings.auth_url != settings.base_url else None
    auth_url = (options.auth_url or explicit_auth or base_url).rstrip("/")
    client_id = options.client_id or settings.client_id
    secret = options.client_secret or (settings.client_secret.reveal()
                                       if settings.client_secret else None)
    world: dict[str, Any] | None = None
    admin = None
    if not options.subjects or not (client_id and secret):
        admin, world = _sandbox_world(base_url, settings.timeout)
    if world is not None and "_error" in world:
        raise ConfigError(f"no --subjects FILE given and {base_url} is not an authzkit sandbox "
                          f"(GET /sandbox/v1/world: {world['_error']}); pass --subjects with "
                          f"subject tokens and answers, and the client credentials")
    if not (client_id and secret):
        client_id, sandbox_secret = resource_server_credentials(world or {})
        secret = sandbox_secret.reveal()
    if options.subjects:
        subjects = subjects_from_csv(options.subjects)
    else:
        subjects = subjects_from_world(
            world or {}, lambda subject: admin.session_token(subject, ttl=SANDBOX_SESSION_TTL))
    template = AuthzClient(base_url=base_url, auth_url=auth_url, client_id=client_id,
                           client_secret=secret, timeout=settings.timeout)
    return Shared(base_url=base_url, auth_url=auth_url, timeout=settings.timeout,
                  token_provider=template.token_provider, keys=template.keys,
                  subjects=tuple(subjects), action=options.action,
                  challenge_action=options.challenge_action,
                  wait=parse_wait_time(options.wait_time), sandbox=world is not None)


def shared(environment: Any, host: str | None) -> Shared:
    """This process's :class:`Shared`, built by the first caller (single-flight)."""
    found = _state.get("shared")
    if found is not None:
        return found
    with _lock():
        if "shared" not in _state:
            if "error" in _state:
                raise _state["error"]
            try:
                _state["shared"] = _build(environment.parsed_options, host)
            except AuthzError as exc:
                _state["error"] = exc
                _stop_test(environment, exc)
                raise
        return _state["shared"]


def _stop_test(environment: Any, error: AuthzError) -> None:
    log.error("authzkit: cannot start the load test: %s", error)
    if not isinstance(environment.runner, WorkerRunner):
        environment.process_exit_code = 2
    if environment.runner is not None:
        gevent.spawn(environment.runner.quit)


# -- users ----------------------------------------------------------------------------------------

class _AuthzUserMixin:
    """What every authzkit user does at start, and the two flows it can run."""

    environment: Any
    host: str | None
    client: Any

    def on_start(self) -> None:
        try:
            state = shared(self.environment, self.host)
        except AuthzError:
            raise StopUser() from None
        number = next(_subject_numbers)
        self.subject = state.subjects[number % len(state.subjects)]
        self.shared = state
        self.authz = AuthzClient(base_url=state.base_url, auth_url=state.auth_url,
                                 session=self.client, timeout=state.timeout,
                                 token_provider=state.token_provider, keys=state.keys)
        self.request = {
            "resource_id": self.subject.resource_id,
            "resource_type": self.subject.resource_type,
            "subject_token": self.subject.token.reveal(),
            "user_agent": USER_AGENT,
            "request_hash": request_hash(f"locust user {number}"),
        }
        self._fire = self.environment.events.request.fire

    def wait_time(self) -> float:
        low, high = self.shared.wait
        return low if low == high else random.uniform(low, high)

    def authorize_once(self) -> None:
        """One plain authorize; anything but ``authorized`` is a failure row."""
        try:
            outcome = self.authz.authorize(self.shared.action, **self.request)
        except AuthzError:
            return  # the transport already marked the row failed with the error type
        if outcome.__class__ is not Authorized:
            self._fire(request_type=UNEXPECTED_ROW[0], name=UNEXPECTED_ROW[1], response_time=0,
                       response_length=0, context={},
                       exception=FlowFailure(f"{outcome.type} (expected authorized)"))

    def challenge_round_trip(self) -> None:
        """Authorize → 403 challenge → JWE (own row) → authorize with the solution."""
        started = time.perf_counter()
        failure = None
        try:
            action = self.shared.challenge_action
            outcome = self.authz.authorize(action, **self.request)
            if not isinstance(outcome, ChallengeRequired):
                raise FlowFailure("authorized without a challenge "
                                  "(expected srn:error:challenge_required)")
            kind, value = pick_answer(outcome, self.subject.answers)
            kid, solution = self._solution(outcome.challenge_id, kind, value)
            try:
                result = self.authz.authorize(action, challenge_solution=solution,
                                              **self.request)
            except UnrecognizedKeyError:  # keys rotated: re-fetch once, re-encrypt, resend
                self.authz.keys.refresh(stale_kid=kid, transport=self.authz.transport)
                kid, solution = self._solution(outcome.challenge_id, kind, value)
                result = self.authz.authorize(action, challenge_solution=solution,
                                              **self.request)
            if not isinstance(result, Authorized):
                raise FlowFailure(f"{result.type} again after the solution")
        except AuthzError as exc:
            failure = FlowFailure(describe(exc))
        except FlowFailure as exc:
            failure = exc
        self._fire(request_type=FLOW_ROW[0], name=FLOW_ROW[1], response_length=0,
                   response_time=(time.perf_counter() - started) * 1000.0, exception=failure,
                   context={})

    def _solution(self, challenge_id: int | str, kind: str, value: str) -> tuple[str, str]:
        kid = self.authz.encryption_key().kid  # may fetch keys: its own "keys" row, not timed
        started = time.perf_counter()
        error = None
        try:
            return kid, self.authz.build_solution(challenge_id, kind, value)
        except AuthzError as exc:
            error = exc
            raise
        finally:
            self._fire(request_type=JWE_ROW[0], name=JWE_ROW[1], response_length=0,
                       response_time=(time.perf_counter() - started) * 1000.0,
                       exception=FlowFailure(describe(error)) if error else None, context={})


def describe(error: AuthzError) -> str:
    """A stable failure text: ``HTTP <status> <type>`` (never a secret, never an id)."""
    if error.type or error.status:
        return " ".join(p for p in (f"HTTP {error.status}" if error.status else "",
                                    error.type or type(error).__name__) if p)
    return f"{type(error).__name__}: {error.message}"


class _HttpBase(_AuthzUserMixin, HttpUser):
    abstract = True


class _FastBase(_AuthzUserMixin, FastHttpUser):
    abstract = True
    # FastHttpSession takes no per-request timeout; these bound every call instead.
    connection_timeout = 10.0
    network_timeout = 10.0


class AuthorizeUser(_HttpBase):
    """Plain authorize through Locust's HttpUser (requests)."""

    @task
    def authorize(self) -> None:
        self.authorize_once()


class ChallengeUser(_HttpBase):
    """The full challenge round trip through Locust's HttpUser."""

    @task
    def challenge(self) -> None:
        self.challenge_round_trip()


class FastAuthorizeUser(_FastBase):
    """Plain authorize through Locust's FastHttpUser (geventhttpclient)."""

    @task
    def authorize(self) -> None:
        self.authorize_once()


class FastChallengeUser(_FastBase):
    """The full challenge round trip through Locust's FastHttpUser."""

    @task
    def challenge(self) -> None:
        self.challenge_round_trip()


class TokenRefreshUser(_HttpBase):
    """Many users on the process's one token provider: watch the ``token`` row stay small."""

    @task
    def authorize(self) -> None:
        self.authorize_once()


# -- end of run: token counters, thresholds, summary ---------------------------------------------

def _provider_counters() -> dict[str, int]:
    state = _state.get("shared")
    if state is None:
        return {"token_calls": 0, "refreshes": 0}
    return {"token_calls": state.token_provider.token_calls,
            "refreshes": state.token_provider.refreshes}


@events.report_to_master.add_listener
def _report_counters(client_id: str, data: dict[str, Any]) -> None:
    data["authzkit_token_provider"] = _provider_counters()


_worker_counters: dict[str, dict[str, int]] = {}


@events.worker_report.add_listener
def _collect_counters(client_id: str, data: dict[str, Any]) -> None:
    if "authzkit_token_provider" in data:
        _worker_counters[client_id] = data["authzkit_token_provider"]


@events.quitting.add_listener
def _at_exit(environment: Any, **_: Any) -> None:
    """On the master (or a lone process): thresholds → exit code, and the summary file."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    options = environment.parsed_options
    total = environment.stats.total
    counters = list(_worker_counters.values()) or [_provider_counters()]
    provider = {key: sum(c.get(key, 0) for c in counters) for key in ("token_calls", "refreshes")}
    provider["processes"] = len(counters)
    errors = [{"type": e.method, "name": e.name, "error": e.parse_error(e.error),
               "occurrences": e.occurrences} for e in environment.stats.errors.values()]
    provider["rejected_401"] = sum(e["occurrences"] for e in errors if "HTTP 401" in e["error"])
    p95 = total.get_response_time_percentile(0.95) or 0.0
    problems = threshold_problems(p95_ms=p95, failure_ratio=total.fail_ratio,
                                  max_p95_ms=options.max_p95_ms,
                                  max_failure_ratio=options.max_failure_ratio)
    checked = options.max_p95_ms is not None or options.max_failure_ratio is not None
    if checked and environment.process_exit_code != 2:
        environment.process_exit_code = 1 if problems else 0
        for problem in problems:
            log.error("authzkit threshold broken: %s", problem)
    log.info("authzkit: token provider made %(token_calls)d token calls (%(refreshes)d "
             "refreshes) in %(processes)d process(es)", provider)
    if options.summary_file:
        summary = {"requests": total.num_requests, "failures_total": total.num_failures,
                   "failures": errors, "token_provider": provider,
                   "thresholds": {"max_p95_ms": options.max_p95_ms,
                                  "max_failure_ratio": options.max_failure_ratio,
                                  "p95_ms": p95, "failure_ratio": total.fail_ratio,
                                  "checked": checked, "passed": not problems,
                                  "problems": problems}}
        path = Path(options.summary_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


__all__ = ["AuthorizeUser", "ChallengeUser", "FastAuthorizeUser", "FastChallengeUser",
           "FlowFailure", "Shared", "TokenRefreshUser", "describe", "shared"]
