"""What one ``authzkit loadtest`` run will do, decided and checked before anything starts.

Every mistake that can be seen from the command line and ``AUTHZKIT_*`` is a
:class:`ConfigError` here, before a sandbox starts or a load request is sent: a bad run
time, a real environment without ``--subjects``, a scenario whose action nothing names on
an environment authzkit does not start (a sandbox demo name is assumed only where a sandbox
world lists it), fault flags with ``AUTHZKIT_BASE_URL`` (they configure the sandbox
authzkit starts, and none is). A service reached through ``AUTHZKIT_BASE_URL`` is asked
once, as :func:`~authzkit.shared.connection.connect` asks it (one GET of its world), whether it is
an authzkit sandbox started elsewhere, when the answer matters (no ``--subjects``, or no
action named): then its world supplies subjects, credentials and demo actions, as on the
sandbox the command starts. Then the locust command line: authzkit's options, the chosen
actions always explicit.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from authzkit.loadtest.roles import role, role_options
from authzkit.sandbox.arguments import fault_flags_given, faults_from_args
from authzkit.sandbox.faults import Faults
from authzkit.shared.options import run_time_seconds
from authzkit.wire.actions import ACTIONS, action_setting
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError, TlsError, TransportError
from authzkit.wire.spec import SANDBOX_WORLD_PATH

if TYPE_CHECKING:
    from authzkit.sandbox.world import World

# The action kind each scenario sends ("token": plain authorize calls on refreshing tokens).
SCENARIO_ACTION = {"authorize": "plain", "challenge": "challenge", "token": "plain"}
# The locust options of the users' credentials and token endpoint (after ``--``): the
# preflight reads them too, so it asks as the users will.
USER_OPTIONS = (
    "--auth-url",
    "--client-id",
    "--client-secret",
    "--issuer",
    "--token-url",
    "--client-auth",
    "--client-key-file",
)


@dataclass(frozen=True)
class RunPlan:
    """The checked inputs of one run."""

    seconds: float
    settings: Settings  # AUTHZKIT_* with --action/--challenge-action in place
    kind: str  # the action kind the scenario sends: plain or challenge
    actions: dict[str, str | None]  # kind -> the chosen action (None: nothing names it)
    named: bool  # the scenario's action came from an option or a variable, not a demo name
    faults: Faults = field(default_factory=Faults)  # what the sandbox started here injects
    # The run takes subjects or demo actions from the world of an authzkit sandbox started
    # elsewhere (AUTHZKIT_BASE_URL, asked once here, when that decides something).
    elsewhere: bool = False

    @property
    def action(self) -> str:
        """The scenario's action."""
        return str(self.actions[self.kind])


def _check_numbers(args: argparse.Namespace) -> None:
    if args.users < 1:
        raise ConfigError(f"--users must be at least 1, got {args.users}")
    if args.rate is not None and not args.rate > 0:
        raise ConfigError(f"--rate must be a positive number per second, got {args.rate:g}")
    if getattr(args, "max_lag_ms", None) is not None and args.rate is None:
        raise ConfigError("--max-lag-ms needs --rate: only the open model has a schedule lag")
    if args.max_in_flight is not None and args.max_in_flight < 1:
        raise ConfigError(f"--max-in-flight must be at least 1, got {args.max_in_flight}")


def _check_drift(args: argparse.Namespace, seconds: float) -> None:
    """When a drift option is given, its two windows must fit in ``--run-time``."""
    given = [
        flag
        for flag in ("--max-drift", "--max-failure-drift", "--drift-window", "--warm-up")
        if getattr(args, flag.removeprefix("--").replace("-", "_"), None) is not None
    ]
    if not given:
        return
    from authzkit.loadtest.record.drift import windows_fit

    why = windows_fit(seconds, getattr(args, "drift_window", None), getattr(args, "warm_up", None))
    if why is not None:
        raise ConfigError(f"{', '.join(given)}: {why}")


def _check_faults(args: argparse.Namespace, settings: Settings) -> Faults:
    """The fault flags given, checked; refused when no sandbox will be started."""
    flags = fault_flags_given(args)
    if flags and not settings.uses_sandbox:
        raise ConfigError(
            f"{', '.join(flags)}: fault flags configure the sandbox `authzkit loadtest` "
            f"starts, and with AUTHZKIT_BASE_URL set none is started (unset it, "
            f"or start `authzkit sandbox {flags[0]} …` yourself)"
        )
    return faults_from_args(args)


def refuse_actions_after_dashes(locust_args: list[str]) -> None:
    """``--action``/``--challenge-action`` after ``--`` are refused by name (before locust's
    own parser would call them unknown): the preflight must ask with the action locust
    sends, so the command must be given it."""
    for arg in locust_args:
        option = arg.split("=", 1)[0]
        if option in (setting.option for setting in ACTIONS.values()):
            raise ConfigError(
                f"give {option} to `authzkit loadtest` itself, not after --: the "
                f"preflight must ask with the action locust sends"
            )


def _identified(settings: Settings) -> World | None:
    """The world of the sandbox at ``AUTHZKIT_BASE_URL`` when it says it is one; None for
    any other service. One GET, by :func:`~authzkit.shared.connection.external_sandbox` (what
    ``connect()`` asks): no second way of telling a sandbox. Not a sandbox and no client
    credentials is its :class:`ConfigError`; no answer, a :class:`TransportError`; a TLS
    failure, a :class:`TlsError` (the service answered)."""
    from authzkit.shared.connection import external_sandbox

    found = external_sandbox(settings)
    if found is None:
        return None
    try:
        return found.world
    finally:
        found.stop()  # closes the connection only: the sandbox is not ours


def _sandbox_elsewhere(args: argparse.Namespace, settings: Settings, kind: str) -> World | None:
    """The world of a sandbox started elsewhere, asked only when it decides something: no
    ``--subjects`` (they come from its world, or the run needs the file), or a scenario
    action named by nothing (its demo name serves where its world lists it). Never on the
    sandbox the command starts, nor for a ``--worker``: its master decides, and forwards
    subjects and actions with each spawn."""
    if settings.uses_sandbox or role(args) == "worker":
        return None
    unnamed = settings.chosen_action(kind, sandbox=False) is None
    if args.subjects is not None and not unnamed:
        return None
    from authzkit.sandbox.world import WorldError

    try:
        world = _identified(settings)
    except (TlsError, WorldError, TransportError):
        raise  # what TLS or its world document said; no answer is one answer, said as such
    except ConfigError as exc:
        if args.subjects is None:
            raise ConfigError(_needs_subjects(str(exc))) from None
        return None  # no sandbox: the action must be named, as on a real environment
    if world is None and args.subjects is None:
        url = settings.base_url
        raise ConfigError(
            _needs_subjects(
                f"{url} is no authzkit sandbox: its {SANDBOX_WORLD_PATH} does not say so"
            )
        )
    return world


def _needs_subjects(why: str) -> str:
    """The real environment's refusal without ``--subjects``, with why it is one."""
    return (
        f"a real environment (AUTHZKIT_BASE_URL) needs --subjects FILE: subject tokens "
        f"cannot be minted there ({why})"
    )


def _choose_actions(
    settings: Settings, kind: str, world: World | None, *, worker: bool
) -> dict[str, str | None]:
    """kind -> action by :meth:`Settings.action`'s one rule, a demo name only on the
    sandbox the command starts or where a sandbox world lists it; the scenario's must be
    chosen (a :class:`ConfigError` naming option and variable), but a worker's: its
    master's actions reach it with the spawn message."""

    def on_sandbox(k: str) -> bool:
        listed = world is not None and action_setting(k).sandbox_default in world.actions
        return settings.uses_sandbox or listed

    actions = {k: settings.chosen_action(k, sandbox=on_sandbox(k)) for k in ACTIONS}
    if not worker:
        actions[kind] = settings.action(kind, sandbox=on_sandbox(kind))
    return actions


def plan_run(args: argparse.Namespace, environ: dict[str, str] | None = None) -> RunPlan:
    """The run's :class:`RunPlan`, or a :class:`ConfigError` naming what is wrong."""
    try:
        seconds = run_time_seconds(args.run_time)
    except ConfigError as exc:
        raise ConfigError(f"-t/--run-time: {exc}") from None
    _check_numbers(args)
    _check_drift(args, seconds)
    refuse_actions_after_dashes(args.locust_args)
    settings = Settings.from_env(environ).with_actions(
        plain=args.action, challenge=args.challenge_action
    )
    faults = _check_faults(args, settings)  # refused with AUTHZKIT_BASE_URL: before asking
    kind = SCENARIO_ACTION[args.scenario]
    world = _sandbox_elsewhere(args, settings, kind)  # no --subjects: a sandbox, or refused
    return RunPlan(
        seconds,
        settings,
        kind,
        _choose_actions(settings, kind, world, worker=role(args) == "worker"),
        named=settings.chosen_action(kind, sandbox=False) is not None,
        faults=faults,
        elsewhere=world is not None,
    )


def process_count(processes: int | None) -> int:
    """How many Locust processes run users: ``--processes`` (-1: one per core), else one."""
    if processes == -1:
        return os.cpu_count() or 1
    return max(processes or 1, 1)


def user_options(locust_args: list[str]) -> dict[str, str]:
    """The users' credential options among the arguments after ``--`` (``client_id`` …)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for option in USER_OPTIONS:
        parser.add_argument(option, default="")
    known, _ = parser.parse_known_args([a for a in locust_args if a != "--"])
    return vars(known)


def locust_options(args: argparse.Namespace, plan: RunPlan, subjects: Path | None) -> list[str]:
    """authzkit's options for the locust command line (actions, thresholds, subjects,
    processes); ``subjects`` is the file the users read (the preflight may have filtered it)."""
    from authzkit.wire.children import free_port

    extra = ["--wait-time", args.wait_time]
    for kind, setting in ACTIONS.items():
        if plan.actions.get(kind):
            extra += [setting.option, str(plan.actions[kind])]
    if args.rate is not None:
        extra += ["--rate", f"{args.rate:g}", "--arrivals", args.arrivals]
        if args.arrivals_seed is not None:
            extra += ["--arrivals-seed", str(args.arrivals_seed)]
        if args.max_in_flight is not None:
            extra += ["--max-in-flight", str(args.max_in_flight)]
    if subjects is not None:
        extra += ["--subjects", str(subjects)]
    for flag, value in (
        ("--max-p95-ms", args.max_p95_ms),
        ("--max-p99-ms", getattr(args, "max_p99_ms", None)),
        ("--max-p999-ms", getattr(args, "max_p999_ms", None)),
        ("--max-failure-ratio", args.max_failure_ratio),
        ("--max-lag-ms", getattr(args, "max_lag_ms", None)),
        ("--max-drift", getattr(args, "max_drift", None)),
        ("--max-failure-drift", getattr(args, "max_failure_drift", None)),
        ("--drift-window", getattr(args, "drift_window", None)),
        ("--warm-up", getattr(args, "warm_up", None)),
    ):
        if value is not None:
            extra += [flag, f"{value:g}"]
    if args.processes:
        port = free_port()
        extra += [
            "--processes",
            str(args.processes),
            "--master-bind-host",
            "127.0.0.1",
            "--master-bind-port",
            str(port),
            "--master-port",
            str(port),
        ]
    return extra + role_options(args) + [a for a in args.locust_args if a != "--"]


__all__ = [
    "SCENARIO_ACTION",
    "USER_OPTIONS",
    "RunPlan",
    "locust_options",
    "plan_run",
    "process_count",
    "refuse_actions_after_dashes",
    "user_options",
]
