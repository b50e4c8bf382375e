"""``authzkit loadtest`` and ``authzkit report``: Locust as a subprocess, results in pandas.

``loadtest`` starts a sandbox process when no ``AUTHZKIT_BASE_URL`` is configured (speaking
``--dialect draft|published``: the users then reach its draft token path, or its OIDC issuer
with ``private_key_jwt``, through the ``AUTHZKIT_*`` variables it exports), writes a
two-line locustfile into the output directory (it imports the user class from
:mod:`authzkit.loadtest.record.users`, so an installed package needs no checkout), runs ``python -m
locust`` headless with a run-time limit, prints progress, then writes the report. With
``--rate`` it runs the open model instead (``OPEN_SCENARIOS``: one scheduling user per
process; see :mod:`authzkit.loadtest.record.schedule`). An authzkit sandbox started elsewhere
and reached through ``AUTHZKIT_BASE_URL`` alone is a sandbox too: its world supplies
subjects, credentials and demo actions (:mod:`authzkit.loadtest.plan` asks it once).
Before anything starts, every option is typed and ranged (:mod:`authzkit.loadtest.arguments`),
the ``[loadtest]`` extra and the arguments after ``--`` are checked, the actions are chosen
(``--action``/``--challenge-action``, else ``AUTHZKIT_PLAIN_ACTION``/``_CHALLENGE_ACTION``,
else the sandbox's demo actions on the sandbox it starts; missing on another environment:
exit 2) and a preflight asks once per distinct subject (:mod:`authzkit.loadtest.preflight`).
Ctrl-C or SIGTERM stops locust and the sandbox, removes the temporary folders and writes a
partial report (:mod:`authzkit.loadtest.interrupt`). A run that sent no request exits 1 and
says why. ``--master``/``--worker`` split a run over machines (:mod:`authzkit.loadtest.roles`):
no sandbox is started, the master's locust waits for its workers and exits 3 when they do
not all come. ``report`` rebuilds the report of a run directory and compares two runs; it
lives in :mod:`authzkit.loadtest.reporting`, with the report that ends a run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.arguments import (
    TOKEN_SCENARIO_TTL,
    add_loadtest_arguments,
    add_report_arguments,
    check_locust_args,
    require_extra,
)
from authzkit.loadtest.launch import counted_since
from authzkit.loadtest.reporting import report_run, run_report
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DIALECTS

if TYPE_CHECKING:
    from authzkit.loadtest.interrupt import Interrupted
    from authzkit.loadtest.plan import RunPlan
    from authzkit.loadtest.resources import Watch
    from authzkit.sandbox.process import SandboxProcess

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


def register(subparsers: Any) -> None:
    """Add ``authzkit loadtest`` and ``authzkit report``."""
    run = subparsers.add_parser(
        "loadtest",
        help="run a Locust load test (a sandbox is started when none is configured)",
        description="Run Locust headless as a subprocess and write its CSV/JSON/HTML plus "
        "report.html into --out. Without AUTHZKIT_BASE_URL a sandbox process is "
        "started for the run. Every option is checked before anything starts; "
        "Ctrl-C or SIGTERM stops the run and keeps a partial report.",
    )
    add_loadtest_arguments(run)
    run.set_defaults(run=run_loadtest)

    report = subparsers.add_parser(
        "report",
        help="tables, plots and report.html of a load-test run directory",
        description="Percentiles per row, throughput, failures by error type; PNGs and a "
        "self-contained report.html. With --compare, deltas against another run.",
    )
    add_report_arguments(report)
    report.set_defaults(run=run_report)


def run_loadtest(args: argparse.Namespace) -> int:
    """Run one load test; the exit code is locust's (thresholds decide it when given), 2 on
    a configuration error or a preflight that no subject passed (then no load is sent), 1
    when no request was sent, 128 + the signal when interrupted."""
    try:
        return _run_loadtest(args)
    except ConfigError as exc:
        print(f"authzkit loadtest: {exc}", file=sys.stderr)
        return 2


def _checked(args: argparse.Namespace) -> tuple[RunPlan, str, Path]:
    """Everything checked before anything starts: the plan, the user class, the output
    directory (created, with the run's locustfile in it)."""
    from authzkit.loadtest.launch import write_locustfile
    from authzkit.loadtest.plan import plan_run, process_count, refuse_actions_after_dashes
    from authzkit.loadtest.roles import check_role
    from authzkit.loadtest.run_directory import claim, release

    require_extra("loadtest")
    check_role(args)
    refuse_actions_after_dashes(args.locust_args)
    check_locust_args(args.locust_args)  # these two before the plan asks a service anything
    plan = plan_run(args)
    user_class = SCENARIOS[args.scenario][1 if args.fast else 0]
    if args.rate is not None:  # the open model: one scheduling user per process
        user_class = OPEN_SCENARIOS[args.scenario]
        args.users = args.expect_workers if args.master else process_count(args.processes)
    out = claim(args.out, args.scenario, overwrite=args.overwrite)  # checked: now it is ours
    try:
        write_locustfile(out, user_class)
    except BaseException:
        release(out)
        raise
    return plan, user_class, out


def _meta(
    args: argparse.Namespace, plan: RunPlan, user_class: str, token_ttl: int | None
) -> dict[str, Any]:
    """run.json as it starts: what was asked."""
    sandbox = plan.settings.uses_sandbox
    return {
        "scenario": args.scenario,
        "user_class": user_class,
        "users": args.users,
        "spawn_rate": args.spawn_rate or args.users,
        "run_time": args.run_time,
        "wait_time": args.wait_time,
        "processes": args.processes,
        "rate": args.rate,
        "arrivals": args.arrivals if args.rate else None,
        "max_in_flight": args.max_in_flight,
        "actions": plan.actions,
        "sandbox": sandbox,
        "sandbox_elsewhere": plan.elsewhere,  # its world supplied subjects or demo actions
        "token_ttl": token_ttl if sandbox else None,
        "dialect": args.dialect if sandbox else None,
        "faults": plan.faults.given() if sandbox else None,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "tls": plan.settings.tls.record(),
        "role": "master" if args.master else None,
        "expect_workers": args.expect_workers,
        "soak": bool(getattr(args, "soak", False)),
    }


def _run_worker(args: argparse.Namespace) -> int:
    """``--worker``: the user class the master runs, checked, then a Locust worker."""
    from authzkit.loadtest.launch import run_worker

    require_extra("worker")
    if args.rate is not None:
        return run_worker(args, OPEN_SCENARIOS[args.scenario])
    return run_worker(args, SCENARIOS[args.scenario][1 if args.fast else 0])


def _soak(args: argparse.Namespace) -> None:
    """``--soak``: its presets, said in one line (:mod:`authzkit.loadtest.soak`)."""
    from authzkit.loadtest.soak import apply_soak
    from authzkit.wire.config import Settings

    sandbox = not args.master and Settings.from_env().uses_sandbox
    said = apply_soak(args, sandbox=sandbox)
    if said:
        print(f"authzkit loadtest: --soak: {' '.join(said)}", flush=True)


def _run_loadtest(args: argparse.Namespace) -> int:
    from authzkit.loadtest.interrupt import interruptible

    if args.worker:
        return _run_worker(args)
    from authzkit.loadtest.run_directory import release

    _soak(args)
    plan, user_class, out = _checked(args)
    try:
        token_ttl = args.token_ttl or (TOKEN_SCENARIO_TTL if args.scenario == "token" else None)
        meta = _meta(args, plan, user_class, token_ttl)
        with interruptible():
            code, stopped = _execute(args, plan, user_class, out, meta, token_ttl)
        meta.update(exit_code=code, finished_at=datetime.now(UTC).isoformat(timespec="seconds"))
        if stopped is not None:
            meta["interrupted"] = stopped.name
        (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return report_run(out, code, stopped, html=not args.no_report)
    finally:
        release(out)


def _execute(
    args: argparse.Namespace,
    plan: RunPlan,
    user_class: str,
    out: Path,
    meta: dict[str, Any],
    token_ttl: int | None,
) -> tuple[int, Interrupted | None]:
    """Start the sandbox (when due), the preflight and locust; stop and clean up whatever
    happens. Locust's exit code, and the interrupt that stopped the run, if one did."""
    from authzkit.loadtest.interrupt import Interrupted, shielded
    from authzkit.sandbox.process import SandboxProcess

    # The sandbox's own log (it announces its demo credentials) stays out of the run dir.
    sandbox = (
        SandboxProcess(token_ttl=token_ttl, dialect=args.dialect, **plan.faults.given())
        if plan.settings.uses_sandbox
        else None
    )
    private = Path(tempfile.mkdtemp(prefix="authzkit-loadtest-"))  # a filtered subjects file
    try:
        return _drive(args, plan, user_class, out, meta, sandbox, private), None
    except Interrupted as exc:
        return exc.exit_code, exc
    finally:
        with shielded():
            if sandbox is not None:
                sandbox.stop()
            shutil.rmtree(private, ignore_errors=True)


def _watch(args: argparse.Namespace, plan: RunPlan, sandbox: SandboxProcess | None) -> Watch:
    """What samples the resources of the processes started here, and marks the faults the
    sandbox injects when it was asked for some worth a mark (rotations, pauses, outage)."""
    from authzkit.loadtest.resources import Watch

    if sandbox is None or sandbox.process is None:
        return Watch(master=bool(args.master or args.processes))
    faults = plan.faults
    marked = bool(faults.rotate_keys_every or faults.pause_every or faults.token_outage)
    return Watch(
        sandbox=sandbox.process.pid,
        master=bool(args.processes),
        stats=sandbox.admin().stats if marked else None,
    )


def _drive(
    args: argparse.Namespace,
    plan: RunPlan,
    user_class: str,
    out: Path,
    meta: dict[str, Any],
    sandbox: SandboxProcess | None,
    private: Path,
) -> int:
    from authzkit.loadtest.child import locust_command
    from authzkit.loadtest.launch import master_gave_up, reach_target, run_locust
    from authzkit.loadtest.plan import locust_options

    host, env, subjects = reach_target(
        args, plan, meta, sandbox=sandbox, user_class=user_class, out=out, private=private
    )
    command = locust_command(
        out / "locustfile.py",
        [user_class],
        host=host,
        users=args.users,
        spawn_rate=args.spawn_rate or args.users,
        run_time=args.run_time,
        out=out,
        extra=locust_options(args, plan, subjects),
    )
    meta["command"] = command[1:]  # secrets travel in the environment, never here
    # The draft is the default: only the other dialect is named (notebook outputs show this).
    where = (
        (" (an authzkit sandbox started elsewhere)" if plan.elsewhere else "")
        if sandbox is None
        else (
            " (sandbox)" if args.dialect == DIALECTS[0] else f" (sandbox, {args.dialect} dialect)"
        )
    )
    if args.master:
        where = f" (master of {args.expect_workers} workers, port {args.master_port})"
    print(
        f"authzkit loadtest: {user_class} x {args.users} for {args.run_time} against "
        f"{host}{where} -> {out}",
        flush=True,
    )
    before = sandbox.admin().stats() if sandbox is not None else {}
    waits = args.expect_workers_max_wait if args.master else 0.0
    watch = _watch(args, plan, sandbox)
    code = run_locust(command, env, out, plan.seconds, args.quiet, watch, waits)
    gave_up = master_gave_up(args, out, code)
    if gave_up is not None:
        return gave_up
    if sandbox is not None:  # what it counted while locust ran (not the preflight)
        (out / "sandbox_stats.json").write_text(
            json.dumps(counted_since(sandbox.admin().stats(), before), indent=2) + "\n",
            encoding="utf-8",
        )
    return code


__all__ = ["OPEN_SCENARIOS", "SCENARIOS", "counted_since", "register", "run_loadtest", "run_report"]
