"""Locust users built on the core client; importing this module sets up the whole process.

``import locust`` monkey-patches with gevent, so only locustfiles import it. Closed-model
users send back to back; under ``--rate`` one user per process runs the schedule, and a
capacity search changes the rate in place (docs/internals.md, "The users").
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from typing import Any

import gevent
from locust import HttpUser, User, events, task
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

from authzkit.loadtest.record.capacity import (
    PART_MESSAGE,
    READY_MESSAGE,
    STEP_MESSAGE,
    SearchHub,
    Searching,
)
from authzkit.loadtest.record.collect import COLLECTOR, SPARE_S
from authzkit.loadtest.record.direct import DirectTransport
from authzkit.loadtest.record.evaluations import tasks_for
from authzkit.loadtest.record.keepalive import Answer
from authzkit.loadtest.record.listeners import schedule_stats
from authzkit.loadtest.record.locust_setup import (
    STOP_SENDING,
    shared,
    state,
    stop_test,
    user_numbers,
)
from authzkit.loadtest.record.pacing import StartWaiter, precise_timer
from authzkit.loadtest.record.prompt import PromptPool
from authzkit.loadtest.record.quiet import QUIET
from authzkit.loadtest.record.schedule import arrival_offsets, process_rate, run_schedule
from authzkit.loadtest.record.tasks import FlowFailure, UserTasks
from authzkit.loadtest.record.timing import HELD_ROWS, Sent
from authzkit.shared.options.load import max_in_flight
from authzkit.wire.config import DEFAULT_TIMEOUT
from authzkit.wire.errors import AuthzError, ConfigError

log = logging.getLogger(__name__)

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
        self.user_tasks = tasks_for(
            state,
            session=self._session(),
            number=next(user_numbers),
            fire=self.environment.events.request.fire,
        )

    _transport: DirectTransport | None = None  # the user's own transport, when it has one

    def _session(self) -> Any:
        return self.client

    def wait_time(self) -> float:
        return self.user_tasks.wait_time()

    def on_stop(self) -> None:
        if self._transport is not None:
            self._transport.close()


class _HttpBase(_AuthzUser, HttpUser):
    abstract = True


class _FastBase(_AuthzUser, FastHttpUser):
    """authzkit's calls go through :class:`~authzkit.loadtest.record.direct.DirectTransport`
    (geventhttpclient, the library under ``FastHttpUser``, straight: about 0.6 times the
    CPU per request of a ``FastHttpUser`` posting the same bytes), configured by the
    user's own ``FastHttpUser`` settings: timeouts, ``concurrency``, ``insecure``.
    ``self.client`` stays Locust's session, for tasks a subclass adds."""

    abstract = True
    connection_timeout = DEFAULT_TIMEOUT  # AUTHZKIT_TIMEOUT's default, not Locust's 60 s
    network_timeout = DEFAULT_TIMEOUT

    def _session(self) -> Any:
        self._transport = DirectTransport(
            fire=self.environment.events.request.fire,
            timeout=self.network_timeout,
            connection_timeout=self.connection_timeout,
            concurrency=self.concurrency,
            insecure=self.insecure,
            tls=state["shared"].tls,
        )
        return self._transport


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
    """Plain authorize through geventhttpclient (a FastHttpUser's settings)."""

    @task
    def authorize(self) -> None:
        self.user_tasks.authorize_once()


class FastChallengeUser(_FastBase):
    """The full challenge round trip through geventhttpclient (a FastHttpUser's settings)."""

    @task
    def challenge(self) -> None:
        self.user_tasks.challenge_round_trip()


class TokenRefreshUser(_HttpBase):
    """Many users on the process's one token provider: watch the ``token`` row stay small."""

    @task
    def authorize(self) -> None:
        self.user_tasks.authorize_once()


# -- open model -----------------------------------------------------------------------------------


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


class _OpenBase(_AuthzUser, User):
    """The open model's user: one per process runs the schedule, the rest stay idle. Its
    plain authorize is pre-built bytes on kept-alive connections
    (:mod:`~authzkit.loadtest.record.timing`); its token, keys and challenge round trips
    go through :class:`~authzkit.loadtest.record.direct.DirectTransport`."""

    abstract = True
    challenge = False

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self._pool: PromptPool | None = None

    def _session(self) -> Any:
        # One connection per call in flight at most (--max-in-flight), as a pooled client.
        self._transport = DirectTransport(
            fire=self.environment.events.request.fire,
            timeout=state["shared"].timeout,
            concurrency=max_in_flight(_option(self.environment, "max_in_flight")),
            tls=state["shared"].tls,
        )
        return self._transport

    def wait_time(self) -> float:
        return 3600.0  # after the schedule: idle (a waiting user is stopped at once)

    def on_start(self) -> None:
        try:
            rate = _share(self.environment)
        except ConfigError as exc:
            state.setdefault("error", exc)
            stop_test(self.environment, exc)
            raise StopUser() from None
        schedule_stats.active = True  # from the first request on, service times are kept too
        super().on_start()
        if state.setdefault("scheduler", id(self)) != id(self):
            log.warning(
                "authzkit: one open-model user per process runs the schedule; "
                "this extra one stays idle"
            )
            return
        self._rate = rate
        self.user_tasks.prepare(challenge=self.challenge)

    @task
    def follow_schedule(self) -> None:
        """Start a call at every intended time of this process's schedule, then idle."""
        if state.get("scheduler") != id(self) or state.get("scheduled"):
            return
        state["scheduled"] = True
        options = self.environment.parsed_options
        # A call starts the moment the scheduler spawns it (record.prompt), not a loop turn later.
        self._pool = PromptPool(max_in_flight(options.max_in_flight), on_error=self._call_failed)
        seconds = getattr(options, "authzkit_schedule_seconds", None)
        schedule_stats.planned(seconds)
        searching = _hub.of(self.environment)
        if searching is not None:  # a capacity search: the steps it announces
            offsets = searching.rate.offsets(clock=time.perf_counter, idle=gevent.sleep)
            gevent.spawn(_hub.report, self.environment, lambda: schedule_stats.in_flight)
        else:
            offsets = arrival_offsets(
                self._rate, options.arrivals, seconds=seconds, seed=_seed(self.environment)
            )
        # A full garbage collection walks every object of the process (Locust, the
        # modules, the subjects) and stops the schedule for tens of ms: what exists now
        # lives until exit, so leave it out of every later collection.
        gc.collect()
        gc.freeze()
        # The wait for each start: a precise timer, not the loop's millisecond one
        # (authzkit.loadtest.record.pacing: a start is never sent a tick late).
        waiter = StartWaiter(precise_timer(), quiet=QUIET)
        # Answers are read at the schedule's wakes (record.collect), not on wakes of their
        # own; a capacity search ends each call when its answer comes, as it judges them.
        awake = None if searching is not None else _collect_at
        # A plain authorize is written by the schedule itself and ended at one of its
        # wakes when it can be (record.timing): no greenlet, no wake of its own; its row is
        # told with others at a wake with room (record.timing.HeldRows).
        send_now = sent_calls = None
        if awake is not None and not self.challenge and isinstance(self.user_tasks, UserTasks):
            sent_calls = _SentCalls(self._pool, self.user_tasks)
            send_now, awake = sent_calls.send_now, sent_calls.awake
        QUIET.begin()  # the process's background steps wait for this schedule's stretches
        try:
            try:
                run_schedule(
                    offsets,
                    self._call,
                    pool=self._pool,
                    stats=schedule_stats,
                    clock=time.perf_counter,
                    sleep=waiter,
                    on_capped=None if searching is None else searching.recorder.capped,
                    stopped=lambda: STOP_SENDING in state,
                    awake=awake,
                    send_now=send_now,
                )
            finally:  # the calls still waiting read their answers as usual
                COLLECTOR.release()
                if sent_calls is not None:
                    sent_calls.rows.tell_all()
            self._pool.join()
        finally:
            QUIET.end()
            waiter.close()

    def _call(self, intended_at: float) -> None:
        try:
            self.user_tasks.scheduled(intended_at, self._on_wire, challenge=self.challenge)
        finally:
            schedule_stats.finished()
            searching = _hub.now
            if searching is not None:
                searching.recorder.end(gevent.getcurrent(), time.perf_counter())

    def _call_failed(self, exc: Exception) -> None:
        """A call raised outside its request's row: reported as a closed-loop task's
        exception is (Locust's exceptions table and log); the schedule goes on."""
        self.environment.events.user_error.fire(
            user_instance=self, exception=exc, tb=exc.__traceback__
        )
        log.error("%s\n%s", exc, "".join(traceback.format_exception(exc)))

    @staticmethod
    def _on_wire(intended_at: float, sent_at: float) -> None:
        """A call's request is on the wire (the schedule lag ends here)."""
        schedule_stats.started(intended_at, sent_at)
        searching = _hub.now
        if searching is not None:
            searching.recorder.begin(gevent.getcurrent(), intended_at, sent_at)

    def on_stop(self) -> None:
        if self._pool is not None:
            self._pool.kill()  # calls still in flight when Locust gave up on the user
        if getattr(self, "user_tasks", None) is not None:
            self.user_tasks.close()
        super().on_stop()


class _SentCalls:
    """The places in the pool of the calls the schedule wrote itself (a ``SentCalls``)."""

    def __init__(self, pool: PromptPool, user_tasks: UserTasks) -> None:
        self._pool, self._tasks = pool, user_tasks
        self._call = user_tasks.open_call()
        self.rows = HELD_ROWS

    def send_now(self, intended_at: float) -> bool:
        if self._call.send_now(intended_at, _OpenBase._on_wire, self):
            self._pool.hold()
            return True
        return False

    def answered(self, sent: Sent, answer: Answer) -> None:
        schedule_stats.finished()
        self._pool.let_go()
        self.rows.add(sent, answer)

    def awake(self, next_at: float | None) -> None:
        """A wake of the schedule (its next start at ``next_at``): the answers that came,
        then the held rows, in the room left before that start."""
        _collect_at(next_at)
        rows = self.rows
        if rows:
            if next_at is not None and COLLECTOR.active:
                rows.tell(next_at - SPARE_S)
            else:  # no wake soon: nothing to hold them for
                rows.tell_all()

    def go_on(self, sent: Sent, outcome: int) -> None:
        self._pool.adopt(self._finish, sent, outcome)

    def _finish(self, sent: Sent, outcome: int) -> None:
        try:
            self._tasks.finish_sent(sent, outcome)
        finally:
            schedule_stats.finished()


def _collect_at(next_at: float | None) -> None:
    COLLECTOR.collect(next_at, time.perf_counter())


class OpenAuthorizeUser(_OpenBase):
    """Open model, plain authorize: ``--rate`` calls per second."""


class OpenChallengeUser(_OpenBase):
    """Open model, the challenge round trip: ``--rate`` flows per second."""

    challenge = True


# -- capacity search: the rate changed in place, step by step ------------------------------------


def _new_search(environment: Any) -> Searching:
    """This process's part of a capacity search (its share, its phase, its seed)."""
    options = environment.parsed_options
    runner = environment.runner
    workers = 1
    if isinstance(runner, MasterRunner | WorkerRunner):
        workers = int(_option(environment, "expect_workers", 1) or 1)
    return Searching(
        workers,
        phase=getattr(runner, "worker_index", 0),
        arrivals=options.arrivals,
        seed=_seed(environment),
        folder=getattr(options, "capacity_dir", "") or ".",
    )


_hub = SearchHub(_new_search)


@events.init_command_line_parser.add_listener
def _capacity_option(parser: Any) -> None:
    parser.add_argument(
        "--capacity-dir",
        default="",
        include_in_web_ui=False,
        metavar="DIR",
        help="set by `authzkit capacity`: follow the steps of its search (DIR's control "
        "file) and write each judged step into DIR",
    )


@events.init.add_listener
def _capacity_messages(environment: Any, **_: Any) -> None:
    """In a capacity run: a sending process follows the steps it is told; the master (or a
    lone process, whose messages go to itself) merges the tallies and reads the control
    file. A worker learns that it is in one from the master's first step message."""
    runner = environment.runner
    if runner is None:
        return
    if not isinstance(runner, MasterRunner):
        runner.register_message(STEP_MESSAGE, _hub.on_step)
    if isinstance(runner, WorkerRunner) or not _option(environment, "capacity_dir"):
        return
    runner.register_message(PART_MESSAGE, _hub.on_part)
    runner.register_message(READY_MESSAGE, _hub.on_ready)
    gevent.spawn(_hub.follow_control, environment)


@events.request.add_listener
def _failed_call(exception: Any = None, **_: Any) -> None:
    """A failed request fails the capacity search's call it belongs to."""
    if exception is not None and _hub.now is not None:
        _hub.now.recorder.failed(gevent.getcurrent())


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


__all__ = [
    "AuthorizeUser",
    "ChallengeUser",
    "FastAuthorizeUser",
    "FastChallengeUser",
    "FlowFailure",
    "OpenAuthorizeUser",
    "OpenChallengeUser",
    "TokenRefreshUser",
    "check_arguments",
    "shared",
]
