"""What one ``authzkit loadtest`` run will do, decided and checked before anything starts.

Every mistake that can be seen from the command line and ``AUTHZKIT_*`` is a
:class:`ConfigError` here, before a sandbox starts or a request is sent: a bad run time, a
real environment without ``--subjects``, a scenario whose action nothing names on an
environment authzkit does not start (a sandbox demo name is never assumed there), fault
flags with ``AUTHZKIT_BASE_URL`` (they configure the sandbox authzkit starts, and none is).
Then the locust command line: authzkit's options, the chosen actions always explicit.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authzkit.actions import ACTIONS
from authzkit.config import Settings
from authzkit.errors import ConfigError
from authzkit.loadtest.roles import needs_subjects, role, role_options
from authzkit.options import run_time_seconds
from authzkit.sandbox.command import given_faults

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
    faults: dict[str, Any] = field(default_factory=dict)  # fault flags for the sandbox

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


def _check_faults(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """The fault flags given, validated; refused when no sandbox will be started."""
    from authzkit.sandbox.faults import Faults

    faults = given_faults(args)
    if faults and not settings.uses_sandbox:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in faults)
        raise ConfigError(
            f"{flags}: fault flags configure the sandbox `authzkit loadtest` "
            f"starts, and with AUTHZKIT_BASE_URL set none is started (unset it, "
            f"or start `authzkit sandbox {flags.split(',')[0]} …` yourself)"
        )
    Faults.of(
        latency_ms=args.latency_ms,
        error_rate=args.error_rate,
        seed=args.fault_seed,
        token_outage=args.token_outage,
        rotate_keys_every=args.rotate_keys_every,
        pause_every=args.pause_every,
        pause_ms=args.pause_ms,
    )
    return faults


def plan_run(args: argparse.Namespace, environ: dict[str, str] | None = None) -> RunPlan:
    """The run's :class:`RunPlan`, or a :class:`ConfigError` naming what is wrong."""
    try:
        seconds = run_time_seconds(args.run_time)
    except ConfigError as exc:
        raise ConfigError(f"-t/--run-time: {exc}") from None
    _check_numbers(args)
    for arg in args.locust_args:
        option = arg.split("=", 1)[0]
        if option in (setting.option for setting in ACTIONS.values()):
            raise ConfigError(
                f"give {option} to `authzkit loadtest` itself, not after --: the "
                f"preflight must ask with the action locust sends"
            )
    settings = Settings.from_env(environ).with_actions(
        plain=args.action, challenge=args.challenge_action
    )
    if args.subjects is None and needs_subjects(settings, role(args)):
        raise ConfigError(
            "a real environment (AUTHZKIT_BASE_URL) needs --subjects FILE: "
            "subject tokens cannot be minted there"
        )
    faults = _check_faults(args, settings)
    kind = SCENARIO_ACTION[args.scenario]
    actions = {k: settings.chosen_action(k) for k in ACTIONS}
    actions[kind] = settings.action(kind)  # the scenario's: known, or a ConfigError
    return RunPlan(
        seconds,
        settings,
        kind,
        actions,
        named=settings.chosen_action(kind, sandbox=False) is not None,
        faults=faults,
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
    from authzkit.sandbox.process import free_port

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
        ("--max-failure-ratio", args.max_failure_ratio),
        ("--max-lag-ms", getattr(args, "max_lag_ms", None)),
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
    "user_options",
]
