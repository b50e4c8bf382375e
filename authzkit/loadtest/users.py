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
report in a Locust custom message (``authzkit_report``), sent right before each of Locust's
own stats reports over the same connection, so the master merges the histograms of a set
of requests before it counts their stats and the merged counts equal Locust's
``num_requests`` row by row; the master (or a lone process) writes ``latency_us`` into the
summary and the histograms into ``histograms.json`` at exit.

The open model (``--rate R``; ``OpenAuthorizeUser`` / ``OpenChallengeUser``, sending through
geventhttpclient straight, :mod:`authzkit.loadtest.direct`): ONE user per process runs a
gevent scheduler (:mod:`authzkit.loadtest.schedule`) that starts a greenlet per intended
start time, at most ``--max-in-flight`` at once, never waiting for answers; further open
users of the same process stay idle. Each process takes ``R / workers``: a lone process all
of it, a worker ``R / --expect-workers``, the option the master sends every worker with
each spawn message (``--processes N`` sets it to N; start exactly that many workers). The
schedule spans the master's ``--run-time`` (sent to the workers the same way) so a finished
run intended exactly the planned starts; keep ``--stop-timeout`` a few seconds so the last
starts finish. Response times count from the intended start (see
:mod:`authzkit.loadtest.tasks` for how the row gets them), service times go into a second
set of histograms, and the schedule counters and lag histogram
travel in the same custom message beside the histograms, merged on the master.
"""

from __future__ import annotations

import gc
import inspect
import itertools
import logging
import threading
import time
from typing import Any

import gevent
from gevent.pool import Pool
from locust import HttpUser, User, events, task
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

from authzkit import options
from authzkit.config import Settings
from authzkit.errors import AuthzError, ConfigError
from authzkit.loadtest.context import Shared, build_shared
from authzkit.loadtest.direct import ScheduledTransport
from authzkit.loadtest.histograms import LatencyRecorder
from authzkit.loadtest.schedule import (
    ARRIVALS,
    DEFAULT_MAX_IN_FLIGHT,
    ScheduleStats,
    arrival_offsets,
    process_rate,
    run_schedule,
)
from authzkit.loadtest.tasks import SERVICE_MS, FlowFailure, UserTasks
from authzkit.loadtest.timeline import SecondRecorder, TimelineMerger
from authzkit.loadtest.verdict import error_entries, run_summary, write_run_files
from authzkit.options import parse_duration
from authzkit.spec import CLIENT_AUTH_METHODS, DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION

log = logging.getLogger(__name__)

# -- command line ------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def add_arguments(parser: Any) -> None:
    """authzkit's options; workers receive them from the master with each spawn message."""
    parser.add_argument("--wait-time", type=options.wait_range, default="0", metavar="S",
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
    parser.add_argument("--action", default="", help=f"action without a challenge (default: "
                        f"AUTHZKIT_PLAIN_ACTION; on a sandbox {DEFAULT_PLAIN_ACTION})")
    parser.add_argument("--challenge-action", default="", help=f"action that demands a "
                        f"challenge (default: AUTHZKIT_CHALLENGE_ACTION; on a sandbox "
                        f"{DEFAULT_CHALLENGE_ACTION})")
    parser.add_argument("--max-p95-ms", type=options.number(above=0, what="milliseconds"),
                        default=None, include_in_web_ui=False,
                        help="exit code 1 when the aggregated p95 exceeds this")
    parser.add_argument("--max-failure-ratio", type=options.ratio, default=None,
                        include_in_web_ui=False,
                        help="exit code 1 when failures / requests exceeds this (0.01 = 1 %%)")
    parser.add_argument("--max-lag-ms", type=options.number(above=0, what="milliseconds"),
                        default=None, include_in_web_ui=False,
                        help="open model: exit code 1 when the schedule lag's p99 exceeds this")
    parser.add_argument("--summary-file", default="", include_in_web_ui=False, metavar="FILE",
                        help="write failures, thresholds, token counters and microsecond "
                             "latencies as JSON at exit (and the HdrHistograms to "
                             "histograms.json beside it)")
    parser.add_argument("--rate", type=options.positive_rate, default=None, metavar="R",
                        help="open model (Open* users): R requests (challenge: flows) per "
                             "second in total, started on schedule whatever the answers")
    parser.add_argument("--arrivals", default="constant", choices=ARRIVALS,
                        help="open model: evenly spaced starts (constant) or a Poisson process")
    parser.add_argument("--arrivals-seed", type=int, default=None, metavar="N",
                        help="open model: seed of the Poisson arrivals (same seed, same times)")
    parser.add_argument("--max-in-flight", type=options.count(1), default=DEFAULT_MAX_IN_FLIGHT,
                        metavar="N", help="open model: calls in flight per process at most "
                                          f"(default {DEFAULT_MAX_IN_FLIGHT}); a start finding "
                                          "N running waits and is counted (cap_reached)")


@events.init.add_listener
def _default_host(environment: Any, **_: Any) -> None:
    """``--host`` falls back to AUTHZKIT_BASE_URL; the master's run time (in seconds) is
    kept in an option of ours, which Locust forwards to the workers with each spawn
    message (its own ``run_time`` it does not)."""
    options = environment.parsed_options
    if options is not None and not isinstance(environment.runner, WorkerRunner):
        run_time = getattr(options, "run_time", None)
        options.authzkit_schedule_seconds = parse_duration(run_time) if run_time else None
    if not environment.host:
        try:
            environment.host = Settings.from_env().base_url
        except ConfigError as exc:
            log.error("authzkit: %s", exc)


@events.init.add_listener
def _warm_inspect_cache(**_: Any) -> None:
    """Pay now for Locust's stop: its ``Runner.stop`` calls ``inspect.stack()`` for a debug
    line, and the first such call in a process maps every loaded module to its file
    (~50 ms with the process blocked). At the run-time limit that pause lands in the
    measurement (an open-model schedule reads it as a burst of late starts); once the
    cache is warm the same call takes ~2 ms."""
    inspect.stack(0)


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
        self.user_tasks = UserTasks(state, session=self._session(), number=next(_user_numbers),
                                    fire=self.environment.events.request.fire)

    def _session(self) -> Any:
        return self.client

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


# -- open model -----------------------------------------------------------------------------------

_schedule = ScheduleStats()


def _option(environment: Any, name: str, default: Any = None) -> Any:
    return getattr(environment.parsed_options, name, default)


def _share(environment: Any) -> float:
    """This process's part of ``--rate``: all of it, or ``R / --expect-workers`` on a worker."""
    workers = 1
    if isinstance(environment.runner, WorkerRunner):
        workers = int(_option(environment, "expect_workers", 1) or 1)
    return process_rate(_option(environment, "rate"), workers)


def _seed(environment: Any) -> str | None:
    seed = _option(environment, "arrivals_seed")
    index = getattr(environment.runner, "worker_index", 0)
    return None if seed is None else f"{seed}:{index}"  # each worker its own, reproducible


# Below this wait the scheduler does not sleep on a timer: libev wakes timers at whole
# milliseconds and a process that blocks in epoll between starts pays for every wake-up.
SPIN_BELOW_S = 0.001


def _wait_for_next_start(seconds: float) -> None:
    """The schedule's sleep. A wait of 1 ms or more is a timer; a shorter one (rates above
    ~1000/s per process) runs the event loop until it has nothing left to do, again and
    again, until the start is due: answers keep being handled, no start waits for a timer
    tick, and the process stays busy. Measured side by side on 2 cores, this kept the lag
    p99 near 0.3 ms up to 90 % of the closed loop's maximum, where timers alone let it
    reach 8-15 ms (benchmarks/latency_truth.py)."""
    if seconds >= SPIN_BELOW_S:
        gevent.sleep(seconds)
        return
    due = time.perf_counter() + seconds
    while time.perf_counter() < due:
        gevent.idle()


class _OpenBase(_AuthzUser, User):
    """The open model's user: one per process runs the schedule, the rest stay idle. It
    sends through :class:`~authzkit.loadtest.direct.ScheduledTransport` (geventhttpclient
    straight, the cheapest way to keep a schedule), not a Locust session."""

    abstract = True
    challenge = False

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._pool: Pool | None = None
        self._transport: ScheduledTransport | None = None

    def _session(self) -> Any:
        # One connection per call in flight at most (--max-in-flight), as a pooled client.
        self._transport = ScheduledTransport(
            fire=self.environment.events.request.fire, timeout=_state["shared"].timeout,
            concurrency=max(int(_option(self.environment, "max_in_flight", 0) or 0), 1))
        return self._transport

    def wait_time(self) -> float:
        return 3600.0  # after the schedule: idle (a waiting user is stopped at once)

    def on_start(self) -> None:
        try:
            rate = _share(self.environment)
        except ConfigError as exc:
            _state.setdefault("error", exc)
            _stop_test(self.environment, exc)
            raise StopUser() from None
        _schedule.active = True  # from the first request on, service times are kept too
        super().on_start()
        if _state.setdefault("scheduler", id(self)) != id(self):
            log.warning("authzkit: one open-model user per process runs the schedule; "
                        "this extra one stays idle")
            return
        self._rate = rate
        self.user_tasks.prepare(challenge=self.challenge)

    @task
    def follow_schedule(self) -> None:
        """Start a call at every intended time of this process's schedule, then idle."""
        if _state.get("scheduler") != id(self) or _state.get("scheduled"):
            return
        _state["scheduled"] = True
        options = self.environment.parsed_options
        self._pool = Pool(max(int(options.max_in_flight or 0), 1))
        seconds = getattr(options, "authzkit_schedule_seconds", None)
        _schedule.planned(seconds)
        offsets = arrival_offsets(self._rate, options.arrivals, seconds=seconds,
                                  seed=_seed(self.environment))
        # A full garbage collection walks every object of the process (Locust, the
        # modules, the subjects) and stops the schedule for tens of ms: what exists now
        # lives until exit, so leave it out of every later collection.
        gc.collect()
        gc.freeze()
        run_schedule(offsets, self._call, pool=self._pool, stats=_schedule,
                     clock=time.perf_counter, sleep=_wait_for_next_start)
        self._pool.join()

    def _call(self, intended_at: float) -> None:
        sent_at = time.perf_counter()
        _schedule.started(intended_at, sent_at)
        try:
            self.user_tasks.scheduled(intended_at, sent_at, challenge=self.challenge)
        finally:
            _schedule.finished()

    def on_stop(self) -> None:
        if self._pool is not None:
            self._pool.kill()  # calls still in flight when Locust gave up on the user
        if self._transport is not None:
            self._transport.close()


class OpenAuthorizeUser(_OpenBase):
    """Open model, plain authorize: ``--rate`` calls per second."""


class OpenChallengeUser(_OpenBase):
    """Open model, the challenge round trip: ``--rate`` flows per second."""

    challenge = True


# -- latency histograms: recorded per request, sent beside Locust's stats ----------------------

_latencies = LatencyRecorder()
_service = LatencyRecorder()  # open model: times from the actual send
_seconds = SecondRecorder()  # response times by the second they completed in
_timeline = TimelineMerger()  # the master's (or lone process's) merge of every drain
_HISTOGRAMS_KEY = "authzkit_latency_us"
_SERVICE_KEY = "authzkit_service_us"
_SCHEDULE_KEY = "authzkit_schedule"
_COUNTERS_KEY = "authzkit_token_provider"
_TIMELINE_KEY = "authzkit_seconds"


@events.request.add_listener
def _record_latency(request_type: str, name: str, response_time: float | None,
                    context: Any = None, **_: Any) -> None:
    _latencies.record(request_type, name, response_time)
    _seconds.record(request_type, name, response_time, time.time())
    if _schedule.active:
        service = context.get(SERVICE_MS, response_time) if isinstance(context, dict) else None
        _service.record(request_type, name, response_time if service is None else service)


def _reset_all() -> None:
    _latencies.reset()
    _service.reset()
    _schedule.reset()
    _seconds.reset()
    _timeline.reset()


@events.test_start.add_listener
def _new_test(**_: Any) -> None:
    # Locust clears its stats right before test_start (master, worker and local runner).
    _reset_all()


@events.reset_stats.add_listener
def _stats_reset(**_: Any) -> None:
    _reset_all()


@events.init.add_listener
def _follow_reset_stats_option(environment: Any, **_: Any) -> None:
    """``--reset-stats``: Locust resets its stats when spawning completes; so do we."""
    def reset(**_: Any) -> None:
        if environment.reset_stats:
            _reset_all()
    environment.events.spawning_complete.add_listener(reset)


# -- end of run: token counters, thresholds, summary ---------------------------------------------

def _provider_counters() -> dict[str, int]:
    state = _state.get("shared")
    if state is None:
        return {"token_calls": 0, "refreshes": 0}
    return {"token_calls": state.token_provider.token_calls,
            "refreshes": state.token_provider.refreshes}


REPORT_MESSAGE = "authzkit_report"  # a Locust custom message, worker → master


def _worker_report() -> dict[str, Any]:
    """What a worker recorded since its last report (deltas, like Locust's own stats), and
    its token provider's counters (totals)."""
    report: dict[str, Any] = {_COUNTERS_KEY: _provider_counters(),
                              _HISTOGRAMS_KEY: _latencies.drain(),
                              _TIMELINE_KEY: _seconds.drain()}
    if _schedule.active:
        report[_SERVICE_KEY] = _service.drain()
        report[_SCHEDULE_KEY] = _schedule.drain()
    return report


_worker_counters: dict[str, dict[str, int]] = {}


def _merge_worker_report(environment: Any, msg: Any, **_: Any) -> None:
    """The master's side of :data:`REPORT_MESSAGE`: merge the worker's histograms (exact:
    counts add up) and keep its latest counters."""
    data = msg.data or {}
    if _COUNTERS_KEY in data:
        _worker_counters[msg.node_id] = data[_COUNTERS_KEY]
    _latencies.add_encoded(data.get(_HISTOGRAMS_KEY, {}))
    _service.add_encoded(data.get(_SERVICE_KEY, {}))
    _schedule.add(data.get(_SCHEDULE_KEY))
    _timeline.add(data.get(_TIMELINE_KEY))


@events.init.add_listener
def _exchange_reports(environment: Any, **_: Any) -> None:
    """Workers send their histograms to the master in a custom message, right before each of
    Locust's own stats reports and from the same greenlet: one worker's messages reach the
    master in the order sent, and the master handles them one at a time, so the histograms
    of a set of requests are merged before Locust counts those requests' stats (the merged
    counts equal Locust's ``num_requests`` row by row, final report included)."""
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        runner.register_message(REPORT_MESSAGE, _merge_worker_report)
    elif isinstance(runner, WorkerRunner):
        def send(**_: Any) -> None:
            runner.send_message(REPORT_MESSAGE, _worker_report())
        environment.events.report_to_master.add_listener(send)


@events.quitting.add_listener
def _at_exit(environment: Any, **_: Any) -> None:
    """On the master (or a lone process): thresholds → exit code, and the summary files."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    options = environment.parsed_options
    total = environment.stats.total
    histograms = _latencies.histograms
    service = _service.histograms if _schedule.active else None
    schedule = _schedule.summary(options.rate) if _schedule.active else None
    summary = run_summary(
        requests=total.num_requests, failures=total.num_failures,
        p95_ms=total.get_response_time_percentile(0.95) or 0.0,
        errors=error_entries(environment.stats.errors.values()),
        counters=list(_worker_counters.values()) or [_provider_counters()],
        max_p95_ms=options.max_p95_ms, max_failure_ratio=options.max_failure_ratio,
        max_lag_ms=getattr(options, "max_lag_ms", None), histograms=histograms,
        service_histograms=service, schedule=schedule)
    verdict = summary["thresholds"]
    if verdict["checked"] and environment.process_exit_code != 2:
        environment.process_exit_code = 0 if verdict["passed"] else 1
        for problem in verdict["problems"]:
            log.error("authzkit threshold broken: %s", problem)
    log.info("authzkit: token provider made %(token_calls)d token calls (%(refreshes)d "
             "refreshes) in %(processes)d process(es)", summary["token_provider"])
    if options.summary_file:
        _timeline.add(_seconds.drain())  # a lone process's own seconds (a master has none)
        write_run_files(options.summary_file, summary, histograms, service,
                        timeline=_timeline.table())


def check_arguments(argv: list[str]) -> int:
    """Parse ``argv`` (what follows ``--`` on ``authzkit loadtest``) with locust's own parser,
    authzkit's options included, as a run would: 0 when accepted, else argparse's exit
    code after its one-line error on stderr. Run in a child, before any sandbox starts."""
    from locust.argument_parser import get_parser

    try:
        get_parser().parse_args(["-f", __file__, *argv])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    return 0


__all__ = ["AuthorizeUser", "ChallengeUser", "FastAuthorizeUser", "FastChallengeUser",
           "FlowFailure", "OpenAuthorizeUser", "OpenChallengeUser", "TokenRefreshUser",
           "check_arguments", "shared"]
