"""What one run is, decided and checked once before anything starts: its :class:`RunPlan`.

Built once from the parsed options (``--soak``'s presets on top), never written back; the
driver, the preflight and run.json read it. Every mistake is a :class:`ConfigError` here;
then the Locust command line (docs/internals.md, "One plan").
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from authzkit.loadtest.arguments import (
    SCENARIO_ACTION,
    TOKEN_SCENARIO_TTL,
    VERDICT_OPTIONS,
    check_locust_args,
)
from authzkit.loadtest.authzen import Evaluations, check_evaluations, check_pdp, run_dialect
from authzkit.loadtest.roles import Role, check_role, role_options
from authzkit.loadtest.soak import soak_presets, soak_words
from authzkit.sandbox.arguments import fault_flags_given, faults_from_args
from authzkit.sandbox.faults import Faults
from authzkit.shared.options import run_time_seconds
from authzkit.wire.actions import ACTIONS, action_setting
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError, TlsError, TransportError
from authzkit.wire.spec import AUTHZEN, SANDBOX_WORLD_PATH

if TYPE_CHECKING:
    from authzkit.sandbox.world import World

SCENARIOS = {  # scenario -> (HttpUser class, FastHttpUser class)
    "authorize": ("AuthorizeUser", "FastAuthorizeUser"),
    "challenge": ("ChallengeUser", "FastChallengeUser"),
    "token": ("TokenRefreshUser", "TokenRefreshUser"),
}
OPEN_SCENARIOS = {  # scenario -> open-model user class (--rate)
    "authorize": "OpenAuthorizeUser",
    "challenge": "OpenChallengeUser",
    "token": "OpenAuthorizeUser",
}
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
_DRIFT_OPTIONS = ("--max-drift", "--max-failure-drift", "--drift-window", "--warm-up")


@dataclass(frozen=True)
class Load:
    """How the load is offered: closed-loop users, or the open model at ``rate``."""

    users: int
    spawn_rate: float
    run_time: str
    seconds: float
    wait_time: str = "0"
    processes: int | None = None
    rate: float | None = None  # the open model's arrivals per second (None: closed loop)
    arrivals: str = "constant"
    arrivals_seed: int | None = None
    max_in_flight: int | None = None
    verdict: tuple[tuple[str, float], ...] = ()  # (option, value) Locust's verdict reads

    def limit(self, option: str) -> float | None:
        """The value of a verdict option (``--max-p95-ms``), None when not given."""
        return dict(self.verdict).get(option)


@dataclass(frozen=True)
class RunPlan:
    """What one run is, checked: built once from the parsed options, never changed."""

    command: str  # "loadtest" or "capacity": the authzkit command that runs it
    scenario: str
    user_class: str
    load: Load
    settings: Settings  # AUTHZKIT_* with --action/--challenge-action in place
    kind: str  # the action kind the scenario sends: plain or challenge
    actions: dict[str, str | None]  # kind -> the chosen action (None: nothing names it)
    named: bool  # the scenario's action came from an option or a variable, not a demo name
    role: Role = field(default_factory=Role)
    faults: Faults = field(default_factory=Faults)  # what the sandbox started here injects
    # The run takes subjects or demo actions from the world of an authzkit sandbox started
    # elsewhere (AUTHZKIT_BASE_URL, asked once here, when that decides something).
    elsewhere: bool = False
    dialect: str = "draft"  # what the sandbox started here speaks (authzen: also a URL's)
    evaluations: Evaluations | None = None  # the authzen dialect's calls (batch, semantic)
    token_ttl: int | None = None  # its token lifetime (None: its own)
    subjects: Path | None = None  # --subjects as given
    preflight: bool = True  # not --no-preflight
    locust_args: tuple[str, ...] = ()  # after --, checked by Locust's parser
    out: Path | None = None  # --out (None: a new directory)
    overwrite: bool = False
    quiet: bool = False
    report: bool = True  # not --no-report
    soak: bool = False  # --soak: an endurance run
    soak_presets: tuple[str, ...] = ()  # what --soak preset, as options

    @property
    def action(self) -> str:
        """The scenario's action."""
        return str(self.actions[self.kind])

    @property
    def action_named(self) -> str | None:
        """The scenario's action when one was chosen (None: the sandbox world's)."""
        return self.actions.get(self.kind)

    @property
    def seconds(self) -> float:
        """The seconds of load (``--run-time``)."""
        return self.load.seconds

    @property
    def sandbox(self) -> bool:
        """Whether the run starts a sandbox of its own."""
        return self.settings.uses_sandbox

    @property
    def out_name(self) -> str:
        """The name a new run directory starts with."""
        return self.scenario if self.command == "loadtest" else f"{self.command}-{self.scenario}"


def user_class(scenario: str, *, fast: bool = False, open_model: bool = False) -> str:
    """The user class that sends ``scenario``: the open model's, else closed-loop (Fast…)."""
    if open_model:
        return OPEN_SCENARIOS[scenario]
    return SCENARIOS[scenario][1 if fast else 0]


def scenario_classes(scenario: str) -> tuple[str, ...]:
    """Every user class that may send ``scenario`` (what a worker loads: its master picks)."""
    return tuple(dict.fromkeys((*SCENARIOS[scenario], OPEN_SCENARIOS[scenario])))


def _seconds(run_time: str) -> float:
    try:
        return run_time_seconds(run_time)
    except ConfigError as exc:
        raise ConfigError(f"-t/--run-time: {exc}") from None


def _check_numbers(given: argparse.Namespace) -> None:
    if given.users < 1:
        raise ConfigError(f"--users must be at least 1, got {given.users}")
    if given.rate is not None and not given.rate > 0:
        raise ConfigError(f"--rate must be a positive number per second, got {given.rate:g}")
    if getattr(given, "max_lag_ms", None) is not None and given.rate is None:
        raise ConfigError("--max-lag-ms needs --rate: only the open model has a schedule lag")
    if given.max_in_flight is not None and given.max_in_flight < 1:
        raise ConfigError(f"--max-in-flight must be at least 1, got {given.max_in_flight}")


def _verdict(given: argparse.Namespace) -> tuple[tuple[str, float], ...]:
    values = (
        (o, getattr(given, o.removeprefix("--").replace("-", "_"), None)) for o in VERDICT_OPTIONS
    )
    return tuple((option, value) for option, value in values if value is not None)


def _check_drift(verdict: tuple[tuple[str, float], ...], seconds: float) -> None:
    """When a drift option is given, its two windows must fit in ``--run-time``."""
    given = dict(verdict)
    named = [option for option in _DRIFT_OPTIONS if option in given]
    if not named:
        return
    from authzkit.loadtest.record.face import windows_fit

    window, warm_up = given.get("--drift-window"), given.get("--warm-up")  # whole seconds
    why = windows_fit(
        seconds,
        None if window is None else int(window),
        None if warm_up is None else int(warm_up),
    )
    if why is not None:
        raise ConfigError(f"{', '.join(named)}: {why}")


def _check_faults(given: argparse.Namespace, settings: Settings) -> Faults:
    """The fault flags given, checked; refused when no sandbox will be started."""
    flags = fault_flags_given(given)
    if flags and not settings.uses_sandbox:
        raise ConfigError(
            f"{', '.join(flags)}: fault flags configure the sandbox `authzkit loadtest` "
            f"starts, and with AUTHZKIT_BASE_URL set none is started (unset it, "
            f"or start `authzkit sandbox {flags[0]} …` yourself)"
        )
    return faults_from_args(given)


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


def _sandbox_elsewhere(
    subjects: Path | None, role: Role, settings: Settings, kind: str
) -> World | None:
    """The world of a sandbox started elsewhere, asked only when it decides something: no
    ``--subjects`` (they come from its world, or the run needs the file), or a scenario
    action named by nothing (its demo name serves where its world lists it). Never on the
    sandbox the command starts, nor for a ``--worker``: its master decides, and forwards
    subjects and actions with each spawn."""
    if settings.uses_sandbox or role.worker:
        return None
    unnamed = settings.chosen_action(kind, sandbox=False) is None
    if subjects is not None and not unnamed:
        return None
    from authzkit.sandbox.world import WorldError

    try:
        world = _identified(settings)
    except (TlsError, WorldError, TransportError):
        raise  # what TLS or its world document said; no answer is one answer, said as such
    except ConfigError as exc:
        if subjects is None:
            raise ConfigError(_needs_subjects(str(exc))) from None
        return None  # no sandbox: the action must be named, as on a real environment
    if world is None and subjects is None:
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


def _checked_first(
    args: argparse.Namespace, environ: Mapping[str, str] | None
) -> tuple[Role, list[str]]:
    """The role and the arguments after ``--``, checked before the plan asks a service
    anything (an action given after ``--`` is refused by name first)."""
    found = check_role(args, dict(environ) if environ is not None else None)
    refuse_actions_after_dashes(args.locust_args)
    return found, check_locust_args(args.locust_args)


def _planned(
    given: argparse.Namespace,
    *,
    command: str,
    role: Role,
    load: Load,
    locust_args: list[str],
    environ: Mapping[str, str] | None,
    said: tuple[str, ...] = (),
) -> RunPlan:
    env = dict(environ) if environ is not None else None
    settings = Settings.from_env(env).with_actions(
        plain=given.action, challenge=given.challenge_action
    )
    dialect = run_dialect(given, settings)
    calls = check_evaluations(given, dialect)
    faults = _check_faults(given, settings)  # refused with AUTHZKIT_BASE_URL: before asking
    subjects: Path | None = None
    token_ttl: int | None = None
    if calls is not None:
        kind, dialect = "plain", AUTHZEN
        actions, named, elsewhere = _authzen_actions(settings, role)
    else:
        kind, dialect = SCENARIO_ACTION[given.scenario], given.dialect
        subjects = Path(given.subjects) if given.subjects is not None else None
        world = _sandbox_elsewhere(subjects, role, settings, kind)  # no --subjects: a sandbox?
        actions = _choose_actions(settings, kind, world, worker=role.worker)
        named = settings.chosen_action(kind, sandbox=False) is not None
        elsewhere = world is not None
        token_ttl = given.token_ttl or (TOKEN_SCENARIO_TTL if given.scenario == "token" else None)
    return RunPlan(
        command=command,
        scenario=given.scenario,
        user_class=user_class(
            given.scenario,
            fast=bool(getattr(given, "fast", False)),
            open_model=load.rate is not None,
        ),
        load=load,
        settings=settings,
        kind=kind,
        actions=actions,
        named=named,
        role=role,
        faults=faults,
        elsewhere=elsewhere,
        dialect=dialect,
        evaluations=calls,
        token_ttl=token_ttl,
        subjects=subjects,
        preflight=not given.no_preflight,
        locust_args=tuple(locust_args),
        out=given.out,
        overwrite=given.overwrite,
        quiet=given.quiet,
        report=not given.no_report,
        soak=bool(getattr(given, "soak", False)),
        soak_presets=said,
    )


def _authzen_actions(settings: Settings, role: Role) -> tuple[dict[str, str | None], bool, bool]:
    """``(actions, named, elsewhere)`` of a run on the AuthZEN dialect: its evaluations
    come from the world of the sandbox it starts (or of an authzkit AuthZEN sandbox at
    ``AUTHZKIT_BASE_URL``), else from ``AUTHZKIT_SUBJECT_*``/``RESOURCE_*`` and the action
    named."""
    action = settings.chosen_action("plain", sandbox=False)
    elsewhere = False
    if not settings.uses_sandbox and not role.worker:
        elsewhere = check_pdp(settings, action)
    named = action is not None or not settings.uses_sandbox
    return {"plain": action, "challenge": None}, named, elsewhere


def _open_model_users(role: Role, processes: int | None) -> int:
    """The open model's users: one scheduling user per process (a master's: per worker)."""
    if role.master:
        return int(role.expect_workers or 1)
    return process_count(processes)


def plan_run(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> RunPlan:
    """The :class:`RunPlan` of ``authzkit loadtest``, or a :class:`ConfigError` naming what
    is wrong. ``args`` is left as parsed: ``--soak``'s presets go on top of a copy."""
    role, locust_args = _checked_first(args, environ)
    env = dict(environ) if environ is not None else None
    settings = Settings.from_env(env)
    own_sandbox = settings.uses_sandbox and run_dialect(args, settings) != AUTHZEN
    presets = soak_presets(args, sandbox=not role.master and own_sandbox)  # AuthZEN: no tokens
    given = argparse.Namespace(**{**vars(args), **presets})
    seconds = _seconds(given.run_time)
    _check_numbers(given)
    verdict = _verdict(given)
    _check_drift(verdict, seconds)
    users = given.users if given.rate is None else _open_model_users(role, given.processes)
    load = Load(
        users=users,
        spawn_rate=given.spawn_rate or users,
        run_time=given.run_time,
        seconds=seconds,
        wait_time=given.wait_time,
        processes=given.processes,
        rate=given.rate,
        arrivals=given.arrivals,
        arrivals_seed=given.arrivals_seed,
        max_in_flight=given.max_in_flight,
        verdict=verdict,
    )
    return _planned(
        given,
        command="loadtest",
        role=role,
        load=load,
        locust_args=locust_args,
        environ=environ,
        said=tuple(soak_words(presets)),
    )


def plan_search(
    args: argparse.Namespace,
    *,
    rate: float,
    run_time: str,
    environ: Mapping[str, str] | None = None,
) -> RunPlan:
    """The :class:`RunPlan` of ``authzkit capacity``'s one Locust run: the open model at
    ``rate`` first (each step then sets its own), for at most ``run_time``; Locust judges
    nothing (the search judges each step)."""
    role, locust_args = _checked_first(args, environ)
    users = _open_model_users(role, args.processes)
    load = Load(
        users=users,
        spawn_rate=users,
        run_time=run_time,
        seconds=_seconds(run_time),
        processes=args.processes,
        rate=rate,
        arrivals=args.arrivals,
        arrivals_seed=args.arrivals_seed,
        max_in_flight=args.max_in_flight,
    )
    if load.max_in_flight is not None and load.max_in_flight < 1:
        raise ConfigError(f"--max-in-flight must be at least 1, got {load.max_in_flight}")
    return _planned(
        args, command="capacity", role=role, load=load, locust_args=locust_args, environ=environ
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


def locust_options(plan: RunPlan, subjects: Path | None) -> list[str]:
    """authzkit's options for the locust command line (actions, thresholds, subjects,
    processes); ``subjects`` is the file the users read (the preflight may have filtered it)."""
    from authzkit.wire.children import free_port

    load = plan.load
    extra = ["--wait-time", load.wait_time]
    for kind, setting in ACTIONS.items():
        if plan.actions.get(kind):
            extra += [setting.option, str(plan.actions[kind])]
    if load.rate is not None:
        extra += ["--rate", f"{load.rate:g}", "--arrivals", load.arrivals]
        if load.arrivals_seed is not None:
            extra += ["--arrivals-seed", str(load.arrivals_seed)]
        if load.max_in_flight is not None:
            extra += ["--max-in-flight", str(load.max_in_flight)]
    if subjects is not None:
        extra += ["--subjects", str(subjects)]
    for option, value in load.verdict:
        extra += [option, f"{value:g}"]
    if plan.evaluations is not None:
        extra += plan.evaluations.locust_options()
    if load.processes:
        port = free_port()
        extra += [
            "--processes",
            str(load.processes),
            "--master-bind-host",
            "127.0.0.1",
            "--master-bind-port",
            str(port),
            "--master-port",
            str(port),
        ]
    return extra + role_options(plan.role) + list(plan.locust_args)


__all__ = [
    "OPEN_SCENARIOS",
    "SCENARIOS",
    "SCENARIO_ACTION",
    "USER_OPTIONS",
    "VERDICT_OPTIONS",
    "Load",
    "RunPlan",
    "locust_options",
    "plan_run",
    "plan_search",
    "process_count",
    "refuse_actions_after_dashes",
    "scenario_classes",
    "user_class",
    "user_options",
]
