"""``authzkit capacity``: the highest arrival rate at which every SLO holds, found in one
Locust run whose rate changes in place.

Everything is checked before anything starts (the options, the SLO, the search's settings,
the role, the arguments after ``--``, and the refusal without ``--max-rate`` on an
environment the command does not start), then, as ``authzkit loadtest --rate`` does: the
sandbox when none is configured (with the fault flags), the preflight, and Locust as a child
running the open model's user with ``--capacity-dir``. Step by step the search announces a
rate (:mod:`~authzkit.loadtest.capacity.channel`), reads back the step's merged tally,
judges it (:mod:`~authzkit.loadtest.capacity.search`), prints one line, and writes
``capacity.json`` so far; then it stops the run and writes the answer and ``report.html``.
Ctrl-C or SIGTERM stops Locust and the sandbox and keeps the steps judged so far.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.capacity.arguments import add_capacity_arguments
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.capacity.channel import StepChannel
    from authzkit.loadtest.capacity.search import Answer, Search, Slo, Verdict
    from authzkit.loadtest.plan import RunPlan
    from authzkit.sandbox.process import SandboxProcess

MAX_STEPS = 64  # doubling from any start rate reaches any service's capacity well before
LEAD_S = 0.3  # a step is announced this long before it starts (a lone machine)
LEAD_REMOTE_S = 1.0  # … with workers on other machines
STEP_SLACK_S = 15.0  # beyond a step's end: its tallies on their way
READY_S = 60.0  # Locust's start-up, the users' first token (beyond a master's wait)
STOP_S = 30.0  # the run's end: its last calls, Locust's files
COOL_DOWN_MAX_S = 10.0  # the network timeout: a call in flight ends by then


def register(subparsers: Any) -> None:
    """Add ``authzkit capacity``."""
    run = subparsers.add_parser(
        "capacity",
        help="find the highest rate the service sustains under an SLO (open model)",
        description="Search, in one Locust run, for the highest arrival rate at which every "
        "SLO holds: probe upward from --start-rate, doubling, until a step breaks, then "
        "bisect to --precision. Each step is judged on its own µs histograms, from each "
        "call's intended start, its warm-up left out. Writes capacity.json and report.html "
        "into --out. Exit 0 with a capacity, 1 when even the first step broke (or below "
        "--min-capacity), 2 for bad input.",
    )
    add_capacity_arguments(run)
    run.set_defaults(run=run_capacity)


def run_capacity(args: argparse.Namespace) -> int:
    """Run the search; its exit code (see the command's description), 128 + the signal
    when interrupted."""
    try:
        return _run(args)
    except ConfigError as exc:
        print(f"authzkit capacity: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from authzkit.loadtest.arguments import require_extra
    from authzkit.loadtest.command import OPEN_SCENARIOS

    require_extra("loadtest")
    args.rate = args.start_rate  # the open model (each step then sets its own rate)
    if args.worker:
        from authzkit.loadtest.launch import run_worker

        return run_worker(args, OPEN_SCENARIOS[args.scenario])
    from authzkit.loadtest.run_directory import release

    plan, out = _checked(args)
    try:
        return _search_and_report(args, plan, out, OPEN_SCENARIOS[args.scenario])
    finally:
        release(out)


def _checked(args: argparse.Namespace) -> tuple[RunPlan, Path]:
    """Everything checked before anything starts; the plan and the output directory."""
    from authzkit.loadtest.arguments import check_locust_args
    from authzkit.loadtest.capacity.arguments import check_search
    from authzkit.loadtest.plan import plan_run, process_count, refuse_actions_after_dashes
    from authzkit.loadtest.roles import check_role
    from authzkit.loadtest.run_directory import claim
    from authzkit.wire.config import Settings

    check_role(args)
    refuse_actions_after_dashes(args.locust_args)
    check_search(args, sandbox_started=Settings.from_env().uses_sandbox)
    check_locust_args(args.locust_args)
    args.run_time = f"{int(MAX_STEPS * (args.step_time + STEP_SLACK_S))}s"  # an upper bound
    plan = plan_run(args)
    args.users = args.expect_workers if args.master else process_count(args.processes)
    return plan, claim(args.out, f"capacity-{args.scenario}", overwrite=args.overwrite)


@dataclass
class _Search:
    """One search as it goes: what it judges against, and what it judged so far."""

    slo: Slo
    search: Search
    settings: dict[str, Any]
    out: Path
    steps: list[Verdict] = field(default_factory=list)
    histograms: dict[str, dict[str, str]] = field(default_factory=dict)
    found: Answer | None = None

    def save(self, interrupted: str | None = None) -> Path:
        from authzkit.loadtest.capacity.results import (
            CAPACITY_FILE,
            HISTOGRAMS_FILE,
            capacity_document,
            write_json,
        )

        write_json(self.out / HISTOGRAMS_FILE, self.histograms)
        document = capacity_document(
            slo=self.slo,
            search=self.search,
            settings=self.settings,
            steps=self.steps,
            found=self.found,
            interrupted=interrupted,
        )
        return write_json(self.out / CAPACITY_FILE, document)


def _new_search(args: argparse.Namespace, out: Path) -> _Search:
    from authzkit.loadtest.capacity.arguments import warm_up
    from authzkit.loadtest.capacity.search import Search, Slo
    from authzkit.loadtest.plan import process_count

    return _Search(
        slo=Slo(args.max_p99_ms, args.max_p999_ms, args.max_failure_ratio),
        search=Search(args.start_rate, args.max_rate, args.precision),
        settings={
            "step_time_s": args.step_time,
            "warm_up_s": warm_up(args),
            "arrivals": args.arrivals,
            "processes": args.expect_workers if args.master else process_count(args.processes),
            "scenario": args.scenario,
        },
        out=out,
    )


def _search_and_report(args: argparse.Namespace, plan: RunPlan, out: Path, user_class: str) -> int:
    from authzkit.loadtest.capacity.output import finish, interrupted_report
    from authzkit.loadtest.interrupt import Interrupted, interruptible
    from authzkit.loadtest.launch import write_locustfile

    write_locustfile(out, user_class)
    search = _new_search(args, out)
    meta = _meta(args, plan, user_class)
    try:
        with interruptible():
            code = _execute(args, plan, out, user_class, search, meta)
    except Interrupted as stopped:
        meta["interrupted"] = stopped.name
        _write_meta(out, meta)
        search.save(interrupted=stopped.name)
        return interrupted_report(search.out, stopped)
    _write_meta(out, meta)
    if code is not None:
        return code
    search.save()
    return finish(out, args.min_capacity, quiet=args.quiet)


def _meta(args: argparse.Namespace, plan: RunPlan, user_class: str) -> dict[str, Any]:
    """run.json: what was run (``authzkit report`` reads the Locust run's parameters)."""
    sandbox = plan.settings.uses_sandbox
    return {
        "command": "capacity",
        "scenario": args.scenario,
        "user_class": user_class,
        "users": args.users,
        "processes": args.processes,
        "rate": args.start_rate,
        "arrivals": args.arrivals,
        "max_in_flight": args.max_in_flight,
        "actions": plan.actions,
        "sandbox": sandbox,
        "sandbox_elsewhere": plan.elsewhere,
        "dialect": args.dialect if sandbox else None,
        "faults": plan.faults.given() if sandbox else None,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "role": "master" if args.master else None,
        "expect_workers": args.expect_workers,
    }


def _write_meta(out: Path, meta: dict[str, Any]) -> None:
    meta["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _execute(
    args: argparse.Namespace,
    plan: RunPlan,
    out: Path,
    user_class: str,
    search: _Search,
    meta: dict[str, Any],
) -> int | None:
    """Start the sandbox (when due), the preflight, Locust and the search; stop and clean
    up whatever happens. None when the search ran to its end, else the exit code."""
    from authzkit.loadtest.interrupt import shielded
    from authzkit.sandbox.process import SandboxProcess

    sandbox = (
        SandboxProcess(token_ttl=args.token_ttl, dialect=args.dialect, **plan.faults.given())
        if plan.settings.uses_sandbox
        else None
    )
    private = Path(tempfile.mkdtemp(prefix="authzkit-capacity-"))
    runs: list[subprocess.Popen[bytes]] = []
    try:
        return _drive(args, plan, out, user_class, search, meta, sandbox, private, runs)
    finally:
        with shielded():
            for process in runs:
                _end_locust(process)
            if sandbox is not None:
                sandbox.stop()
            shutil.rmtree(private, ignore_errors=True)


def _end_locust(process: subprocess.Popen[bytes]) -> None:
    """Locust stopped, writing its files (SIGTERM), unless it already ended."""
    from authzkit.wire.children import stop_process

    if process.poll() is None:
        stop_process(process)


def _drive(
    args: argparse.Namespace,
    plan: RunPlan,
    out: Path,
    user_class: str,
    search: _Search,
    meta: dict[str, Any],
    sandbox: SandboxProcess | None,
    private: Path,
    runs: list[subprocess.Popen[bytes]],
) -> int | None:
    from authzkit.loadtest.capacity.channel import SearchFailed, StepChannel
    from authzkit.loadtest.child import OUTPUT_FILE
    from authzkit.loadtest.launch import master_gave_up, reach_target
    from authzkit.wire.children import leave_interrupts_to_parent

    host, env, subjects = reach_target(
        args, plan, meta, sandbox=sandbox, user_class=user_class, out=out, private=private
    )
    channel = StepChannel(out, None)
    command = _locust_command(args, plan, out, user_class, host, subjects)
    meta["locust_command"] = command[1:]  # secrets travel in the environment, never here
    _announce(args, host, sandbox, plan, out, search)
    with (out / OUTPUT_FILE).open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
            cwd=out,
            preexec_fn=leave_interrupts_to_parent,  # a Ctrl-C is ours to pass on, in order
        )
    runs.append(process)
    channel.process = process
    try:
        _follow(args, channel, search)
    except SearchFailed as exc:
        gave_up = master_gave_up(args, out, _ended(process))
        if gave_up is not None:
            return gave_up
        search.save()
        print(f"authzkit capacity: {exc}", file=sys.stderr)
        return 1
    finally:
        channel.stop()
    _wait_end(process)
    channel.close()
    return None


def _locust_command(
    args: argparse.Namespace, plan: RunPlan, out: Path, user_class: str, host: str, subjects: Any
) -> list[str]:
    from authzkit.loadtest.child import locust_command
    from authzkit.loadtest.plan import locust_options

    # Locust judges nothing itself: the search judges each step. The search's --warm-up
    # (each step's first seconds) is its own, not a load test's drift warm-up.
    slos = ("max_failure_ratio", "max_p99_ms", "max_p999_ms")  # the search's, per step
    given = argparse.Namespace(**{**vars(args), **dict.fromkeys(slos), "warm_up": None})
    return locust_command(
        out / "locustfile.py",
        [user_class],
        host=host,
        users=args.users,
        spawn_rate=args.users,
        run_time=args.run_time,
        out=out,
        extra=[*locust_options(given, plan, subjects), "--capacity-dir", str(out)],
    )


def _announce(
    args: argparse.Namespace,
    host: str,
    sandbox: SandboxProcess | None,
    plan: RunPlan,
    out: Path,
    search: _Search,
) -> None:
    where = " (sandbox)" if sandbox is not None else ""
    if plan.elsewhere:
        where = " (an authzkit sandbox started elsewhere)"
    if args.master:
        where = f" (master of {args.expect_workers} workers, port {args.master_port})"
    print(
        f"authzkit capacity: {args.scenario} against {host}{where}, SLO "
        f"{search.slo.describe()}, {args.step_time:g} s steps from {args.start_rate:g}/s -> {out}",
        flush=True,
    )


def _ended(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        return -1


def _wait_end(process: subprocess.Popen[bytes]) -> None:
    """The run told to stop: Locust's last calls and files, at most :data:`STOP_S`."""
    try:
        process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        _end_locust(process)


def _follow(args: argparse.Namespace, channel: StepChannel, search: _Search) -> None:
    """The search, step by step, until it has its answer."""
    from authzkit.loadtest.capacity.output import step_line
    from authzkit.loadtest.capacity.results import step_result
    from authzkit.loadtest.capacity.search import answer, judge
    from authzkit.loadtest.record.schedule import Step

    waits = args.expect_workers_max_wait if args.master else 0.0
    channel.wait("ready", None, READY_S + waits, "every process to be ready")
    lead = LEAD_REMOTE_S if args.master else LEAD_S
    grace = search.slo.largest_ms / 1000.0 + 0.05
    rate = search.search.next_rate(search.steps)
    while rate is not None and len(search.steps) < MAX_STEPS:
        index = len(search.steps)
        step = Step(
            index,
            rate,
            time.time() + lead,
            args.step_time,
            float(search.settings["warm_up_s"]),
            grace,
        )
        channel.announce(step.message())
        seconds = lead + args.step_time + grace + STEP_SLACK_S
        merged = channel.wait("step", index, seconds, f"the tallies of step {index + 1}")
        verdict = judge(step_result(merged), search.slo)
        search.steps.append(verdict)
        search.histograms[str(index)] = {"latency": merged["latency"], "lag": merged["lag"]}
        search.save()
        if not args.quiet:
            print(step_line(verdict), flush=True)
        _cool_down(verdict)
        rate = search.search.next_rate(search.steps)
    search.found = answer(search.steps, search.search)


def _cool_down(verdict: Verdict) -> None:
    """After a step that left calls in flight (a service behind), wait until they should be
    answered, so the next step starts on an idle service (at most :data:`COOL_DOWN_MAX_S`)."""
    result = verdict.result
    if result.in_flight:
        speed = max(result.achieved_per_s, 1.0)
        time.sleep(min(COOL_DOWN_MAX_S, result.in_flight / speed + 0.2))


__all__ = ["MAX_STEPS", "register", "run_capacity"]
