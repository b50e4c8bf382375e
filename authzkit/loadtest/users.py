"""Locust users built on the core client: the only authzkit module that imports locust.

``import locust`` monkey-patches the process with gevent, so only locustfiles import this
module (``locustfiles/*.py`` and the one ``authzkit loadtest`` writes); tests, the CLI and
notebooks run ``locust`` as a subprocess. What a user does per task is
:mod:`authzkit.loadtest.tasks`; what a process shares is :mod:`authzkit.loadtest.context`.

Each user is one resource server calling the service back to back (zero wait unless
``--wait-time`` says otherwise). Everything a process shares is built once, lazily, by the
first user that starts (after gevent patched the process): the settings, ONE token provider
and ONE key cache for all users, and the subjects (minted by a sandbox, or read from
``--subjects FILE``). A user prebuilds its request arguments in ``on_start`` and its task is
one ``client.authorize`` call: the core's transport names the rows (``token``, ``keys``,
``authorize``, ``authorize:solution``) and marks challenge 403s successes.

Every request's response time also goes into the row's microsecond HdrHistogram
(:mod:`authzkit.loadtest.histograms`). A worker sends what it recorded since its last
report inside Locust's own worker report (``report_to_master``), the very message that
carries Locust's stats of the same requests, so the master's merged counts equal Locust's
``num_requests`` row by row; the master (or a lone process) writes ``latency_us`` into the
summary and the histograms into ``histograms.json`` at exit.
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any

import gevent
from locust import HttpUser, events, task
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import StopUser
from locust.runners import WorkerRunner

from authzkit.config import Settings
from authzkit.errors import AuthzError, ConfigError
from authzkit.loadtest.context import Shared, build_shared
from authzkit.loadtest.histograms import LatencyRecorder
from authzkit.loadtest.tasks import FlowFailure, UserTasks
from authzkit.loadtest.verdict import error_entries, run_summary, write_run_files
from authzkit.spec import CLIENT_AUTH_METHODS, DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION

log = logging.getLogger(__name__)

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
    parser.add_argument("--issuer", default="",
                        help="OpenID Connect issuer whose discovery document names the token "
                             "endpoint (default: AUTHZKIT_ISSUER; unset: the draft path)")
    parser.add_argument("--token-url", default="",
                        help="explicit OAuth 2.0 token endpoint (default: AUTHZKIT_TOKEN_URL)")
    parser.add_argument("--client-auth", default="", choices=("", *CLIENT_AUTH_METHODS),
                        help="draft, client_secret_post, client_secret_basic or "
                             "private_key_jwt (default: AUTHZKIT_CLIENT_AUTH; draft with an "
                             "issuer means private_key_jwt given a key, else "
                             "client_secret_post)")
    parser.add_argument("--client-key-file", default="", metavar="FILE",
                        help="the client's RSA private key (PEM or JWK) for private_key_jwt "
                             "(default: AUTHZKIT_CLIENT_KEY_FILE, or a published-dialect "
                             "sandbox's demo key)")
    parser.add_argument("--action", default=DEFAULT_PLAIN_ACTION, help="action without a challenge")
    parser.add_argument("--challenge-action", default=DEFAULT_CHALLENGE_ACTION,
                        help="action that demands a challenge")
    parser.add_argument("--max-p95-ms", type=float, default=None, include_in_web_ui=False,
                        help="exit code 1 when the aggregated p95 exceeds this")
    parser.add_argument("--max-failure-ratio", type=float, default=None, include_in_web_ui=False,
                        help="exit code 1 when failures / requests exceeds this (0.01 = 1 %%)")
    parser.add_argument("--summary-file", default="", include_in_web_ui=False, metavar="FILE",
                        help="write failures, thresholds, token counters and microsecond "
                             "latencies as JSON at exit (and the HdrHistograms to "
                             "histograms.json beside it)")


@events.init.add_listener
def _default_host(environment: Any, **_: Any) -> None:
    """``--host`` falls back to AUTHZKIT_BASE_URL."""
    if not environment.host:
        try:
            environment.host = Settings.from_env().base_url
        except ConfigError as exc:
            log.error("authzkit: %s", exc)


# -- per-process shared state ---------------------------------------------------------------------

_state: dict[str, Any] = {}
_user_numbers = itertools.count()


def _lock() -> Any:
    # Created on first use, i.e. after gevent patched threading: a cooperative lock.
    return _state.setdefault("lock", threading.Lock())


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
                _state["shared"] = build_shared(environment.parsed_options, host)
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

class _AuthzUser:
    """Start-up shared by every authzkit user: the process's state, then this user's tasks."""

    environment: Any
    host: str | None
    client: Any
    user_tasks: UserTasks  # not `tasks`: Locust owns that name

    def on_start(self) -> None:
        try:
            state = shared(self.environment, self.host)
        except AuthzError:
            raise StopUser() from None
        self.user_tasks = UserTasks(state, session=self.client, number=next(_user_numbers),
                                fire=self.environment.events.request.fire)

    def wait_time(self) -> float:
        return self.user_tasks.wait_time()


class _HttpBase(_AuthzUser, HttpUser):
    abstract = True


class _FastBase(_AuthzUser, FastHttpUser):
    abstract = True
    # FastHttpSession takes no per-request timeout; these bound every call instead.
    connection_timeout = 10.0
    network_timeout = 10.0


class AuthorizeUser(_HttpBase):
    """Plain authorize through Locust's HttpUser (requests)."""

    @task
    def authorize(self) -> None:
        self.user_tasks.authorize_once()


class ChallengeUser(_HttpBase):
    """The full challenge round trip through Locust's HttpUser."""

    @task
    def challenge(self) -> None:
        self.user_tasks.challenge_round_trip()


class FastAuthorizeUser(_FastBase):
    """Plain authorize through Locust's FastHttpUser (geventhttpclient)."""

    @task
    def authorize(self) -> None:
        self.user_tasks.authorize_once()


class FastChallengeUser(_FastBase):
    """The full challenge round trip through Locust's FastHttpUser."""

    @task
    def challenge(self) -> None:
        self.user_tasks.challenge_round_trip()


class TokenRefreshUser(_HttpBase):
    """Many users on the process's one token provider: watch the ``token`` row stay small."""

    @task
    def authorize(self) -> None:
        self.user_tasks.authorize_once()


# -- latency histograms: recorded per request, reported with Locust's stats ---------------------

_latencies = LatencyRecorder()
_HISTOGRAMS_KEY = "authzkit_latency_us"


@events.request.add_listener
def _record_latency(request_type: str, name: str, response_time: float | None,
                    **_: Any) -> None:
    _latencies.record(request_type, name, response_time)


@events.test_start.add_listener
def _new_test(**_: Any) -> None:
    # Locust clears its stats right before test_start (master, worker and local runner).
    _latencies.reset()


@events.reset_stats.add_listener
def _stats_reset(**_: Any) -> None:
    _latencies.reset()


@events.init.add_listener
def _follow_reset_stats_option(environment: Any, **_: Any) -> None:
    """``--reset-stats``: Locust resets its stats when spawning completes; so do we."""
    def reset(**_: Any) -> None:
        if environment.reset_stats:
            _latencies.reset()
    environment.events.spawning_complete.add_listener(reset)


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
    data[_HISTOGRAMS_KEY] = _latencies.drain()  # a delta, like Locust's stats beside it


_worker_counters: dict[str, dict[str, int]] = {}


@events.worker_report.add_listener
def _collect_counters(client_id: str, data: dict[str, Any]) -> None:
    if "authzkit_token_provider" in data:
        _worker_counters[client_id] = data["authzkit_token_provider"]
    _latencies.add_encoded(data.get(_HISTOGRAMS_KEY, {}))


@events.quitting.add_listener
def _at_exit(environment: Any, **_: Any) -> None:
    """On the master (or a lone process): thresholds → exit code, and the summary files."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    options = environment.parsed_options
    total = environment.stats.total
    histograms = _latencies.histograms
    summary = run_summary(
        requests=total.num_requests, failures=total.num_failures,
        p95_ms=total.get_response_time_percentile(0.95) or 0.0,
        errors=error_entries(environment.stats.errors.values()),
        counters=list(_worker_counters.values()) or [_provider_counters()],
        max_p95_ms=options.max_p95_ms, max_failure_ratio=options.max_failure_ratio,
        histograms=histograms)
    verdict = summary["thresholds"]
    if verdict["checked"] and environment.process_exit_code != 2:
        environment.process_exit_code = 0 if verdict["passed"] else 1
        for problem in verdict["problems"]:
            log.error("authzkit threshold broken: %s", problem)
    log.info("authzkit: token provider made %(token_calls)d token calls (%(refreshes)d "
             "refreshes) in %(processes)d process(es)", summary["token_provider"])
    if options.summary_file:
        write_run_files(options.summary_file, summary, histograms)


__all__ = ["AuthorizeUser", "ChallengeUser", "FastAuthorizeUser", "FastChallengeUser",
           "FlowFailure", "TokenRefreshUser", "shared"]
