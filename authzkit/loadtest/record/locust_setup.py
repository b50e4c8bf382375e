"""Locust's set-up in one process, besides its users: authzkit's options, the host, and
the state its users share (built once, by the first user that starts).

Imports locust (with :mod:`~authzkit.loadtest.record.users` and
:mod:`~authzkit.loadtest.record.listeners`, the only modules that do): only a locustfile
imports it, through :mod:`~authzkit.loadtest.record.users`.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import threading
from typing import Any

import gevent
from locust import events
from locust.runners import MasterRunner, WorkerRunner

from authzkit.loadtest.record.context import ProcessState, build_process_state
from authzkit.loadtest.record.evaluations import (
    add_authzen_arguments,
    build_authzen_state,
    is_authzen,
)
from authzkit.shared import options
from authzkit.shared.options import parse_duration
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import CLIENT_AUTH_METHODS

log = logging.getLogger(__name__)

# -- command line ------------------------------------------------------------------------------


@events.init_command_line_parser.add_listener
def add_arguments(parser: Any) -> None:
    """authzkit's options; workers receive them from the master with each spawn message.
    The load options come from their one definition (:mod:`authzkit.shared.options.load`),
    which ``authzkit loadtest``'s parser takes too."""
    _add_client_arguments(parser)
    options.add_action_options(parser)
    options.add_load_options(parser, locust=True)
    _add_summary_file(parser)
    add_authzen_arguments(parser)


def _add_client_arguments(parser: Any) -> None:
    """Who the users are and how they get their tokens."""
    parser.add_argument("--auth-url", default="", help="token host (default: the --host)")
    parser.add_argument(
        "--client-id",
        default="",
        help="resource_server client id (default: AUTHZKIT_CLIENT_ID, or the "
        "sandbox's demo client)",
    )
    parser.add_argument(
        "--client-secret",
        default="",
        is_secret=True,
        help="its secret (default: AUTHZKIT_CLIENT_SECRET)",
    )
    parser.add_argument(
        "--issuer",
        default="",
        help="OpenID Connect issuer whose discovery document names the token "
        "endpoint (default: AUTHZKIT_ISSUER; unset: the draft path)",
    )
    parser.add_argument(
        "--token-url",
        default="",
        help="explicit OAuth 2.0 token endpoint (default: AUTHZKIT_TOKEN_URL)",
    )
    parser.add_argument(
        "--client-auth",
        default="",
        choices=("", *CLIENT_AUTH_METHODS),
        help=f"{', '.join(CLIENT_AUTH_METHODS)} (default: AUTHZKIT_CLIENT_AUTH; draft with an "
        "issuer means private_key_jwt given a key, else "
        "client_secret_post)",
    )
    parser.add_argument(
        "--client-key-file",
        default="",
        metavar="FILE",
        help="the client's RSA private key (PEM or JWK) for private_key_jwt "
        "(default: AUTHZKIT_CLIENT_KEY_FILE, or a published-dialect "
        "sandbox's demo key)",
    )


def _add_summary_file(parser: Any) -> None:
    """Where the process writes its summary (the run's own options, thresholds included,
    are the load options: one definition for the command and this parser alike)."""
    parser.add_argument(
        "--summary-file",
        default="",
        include_in_web_ui=False,
        metavar="FILE",
        help="write failures, thresholds, token counters and microsecond "
        "latencies as JSON at exit (and the HdrHistograms to "
        "histograms.json beside it)",
    )


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


@events.init.add_listener
def _clock_now(**_: Any) -> None:
    """Bring gevent's loop clock to now before Locust arms its run-time timer: the loop
    caches its time, and it has not turned while the process imported everything, so a
    timer armed next would count from seconds ago (a 5 s run on a busy machine sent for
    0.75 s, and a 3 s one sent nothing). Registered after the listeners that block."""
    gevent.get_hub().loop.update_now()


# -- per-process shared state ---------------------------------------------------------------------

state: dict[str, Any] = {}
user_numbers = itertools.count()
STOP_SENDING = "stop_sending"  # in state once Locust quits: no call starts after it


# The master's word to its workers that Locust is quitting: a worker hears only "quit", on
# which it lets its users run for --stop-timeout before it stops them.
STOP_SENDING_MESSAGE = "authzkit_stop_sending"


@events.quitting.add_listener
def _stop_sending(**_: Any) -> None:
    """Locust quits: no call starts from now on. On SIGTERM (the command's answer to Ctrl-C,
    SIGTERM or Stop) Locust fires ``quitting`` BEFORE it stops its users, which it lets run
    for ``--stop-timeout``: an open-model schedule would go on sending meanwhile. At a run's
    normal end the users have stopped already, and this changes nothing."""
    state[STOP_SENDING] = True


@events.init.add_listener
def _workers_stop_sending(environment: Any, **_: Any) -> None:
    """The same for a master's workers, which hear only "quit" and then let their users run
    for ``--stop-timeout``: the master tells them first (:data:`STOP_SENDING_MESSAGE`).
    Added at init, after the runner's own ``quitting`` listener (which sends "quit"), so
    that it fires before it: Locust fires ``quitting`` in reverse order."""
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.register_message(
            STOP_SENDING_MESSAGE, lambda **_: state.__setitem__(STOP_SENDING, True)
        )
    elif isinstance(runner, MasterRunner):
        environment.events.quitting.add_listener(
            lambda **_: runner.send_message(STOP_SENDING_MESSAGE)
        )
        runner.quit = _once(runner.quit)  # type: ignore[method-assign]


def _once(quit: Any) -> Any:
    """A master's ``quit``, done once: on SIGTERM Locust calls it twice (its ``quitting``
    listener, then its shutdown), each time waiting half a second for reports that came."""
    done: list[bool] = []

    def quit_once() -> None:
        if not done:
            done.append(True)
            quit()

    return quit_once


def _lock() -> Any:
    # Created on first use, i.e. after gevent patched threading: a cooperative lock.
    return state.setdefault("lock", threading.Lock())


def shared(environment: Any, host: str | None) -> ProcessState:
    """This process's :class:`ProcessState`, built by the first caller (single-flight)."""
    found: ProcessState | None = state.get("shared")
    if found is not None:
        return found
    with _lock():
        if "shared" not in state:
            if "error" in state:
                raise state["error"]
            try:
                options = environment.parsed_options
                build = build_authzen_state if is_authzen(options) else build_process_state
                state["shared"] = build(options, host)
            except AuthzError as exc:
                state["error"] = exc
                stop_test(environment, exc)
                raise
        built: ProcessState = state["shared"]
        return built


def stop_test(environment: Any, error: AuthzError) -> None:
    log.error("authzkit: cannot start the load test: %s", error)
    if not isinstance(environment.runner, WorkerRunner):
        environment.process_exit_code = 2
    if environment.runner is not None:
        gevent.spawn(environment.runner.quit)


__all__ = ["STOP_SENDING", "add_arguments", "shared", "state", "stop_test", "user_numbers"]
