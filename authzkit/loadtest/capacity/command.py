"""``authzkit capacity``: the highest arrival rate at which every SLO holds, found in one
Locust run whose rate changes in place.

Checks everything first, drives Locust as ``loadtest --rate`` does, then step by step
announces a rate, judges its tally, writes ``capacity.json`` (docs/internals.md, "The
capacity search").
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.capacity.arguments import add_capacity_arguments
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.capacity.channel import StepChannel
    from authzkit.loadtest.capacity.search import Answer, Search, Slo, Verdict
    from authzkit.loadtest.plan import RunPlan

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
    from authzkit.loadtest.capacity.arguments import check_search
    from authzkit.loadtest.driver import run_worker, write_locustfile
    from authzkit.loadtest.plan import plan_search
    from authzkit.loadtest.run_directory import claim, release
    from authzkit.wire.config import Settings

    require_extra("loadtest")
    if not args.worker:
        check_search(args, sandbox_started=Settings.from_env().uses_sandbox)
    # the open model at --start-rate (each step then sets its own), for at most MAX_STEPS
    upper = f"{int(MAX_STEPS * (args.step_time + STEP_SLACK_S))}s"
    plan = plan_search(args, rate=args.start_rate, run_time=upper)
    if plan.role.worker:
        return run_worker(plan)
    out = claim(plan.out, plan.out_name, overwrite=plan.overwrite)
    try:
        write_locustfile(out, plan.user_class)
        return _search_and_report(plan, _new_search(args, plan, out))
    finally:
        release(out)


@dataclass
class _Search:
    """One search as it goes: what it judges against, and what it judged so far."""

    slo: Slo
    search: Search
    settings: dict[str, Any]
    out: Path
    min_capacity: float | None = None
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


def _new_search(args: argparse.Namespace, plan: RunPlan, out: Path) -> _Search:
    from authzkit.loadtest.capacity.arguments import warm_up
    from authzkit.loadtest.capacity.search import Search, Slo

    return _Search(
        slo=Slo(args.max_p99_ms, args.max_p999_ms, args.max_failure_ratio),
        search=Search(args.start_rate, args.max_rate, args.precision),
        settings={
            "step_time_s": args.step_time,
            "warm_up_s": warm_up(args),
            "arrivals": plan.load.arrivals,
            "processes": plan.load.users,  # one scheduling user per process
            "scenario": plan.scenario,
            **_evaluations(plan),
        },
        out=out,
        min_capacity=args.min_capacity,
    )


def _evaluations(plan: RunPlan) -> dict[str, Any]:
    """An AuthZEN search's calls (its rates are calls per second: ``batch`` decisions
    each at most)."""
    calls = plan.evaluations
    if calls is None:
        return {}
    semantic = calls.semantic if calls.batch is not None else None
    return {"dialect": plan.dialect, "batch": calls.batch, "semantic": semantic}


def _search_and_report(plan: RunPlan, search: _Search) -> int:
    from authzkit.loadtest.capacity.output import finish, interrupted_report
    from authzkit.loadtest.interrupt import Interrupted, interruptible
    from authzkit.loadtest.run_directory import run_json, write_run_json

    out = search.out
    meta = run_json(plan)
    try:
        with interruptible():
            code = _execute(plan, search, meta)
    except Interrupted as stopped:
        meta["interrupted"] = stopped.name
        write_run_json(out, meta)
        search.save(interrupted=stopped.name)
        return interrupted_report(out, stopped)
    write_run_json(out, meta)
    if code is not None:
        return code
    search.save()
    return finish(out, search.min_capacity, quiet=plan.quiet)


def _execute(plan: RunPlan, search: _Search, meta: dict[str, Any]) -> int | None:
    """The sandbox (when due), the preflight, Locust and the search, all stopped whatever
    happens. None when the search ran to its end, else the exit code."""
    from authzkit.loadtest.capacity.channel import SearchFailed, StepChannel
    from authzkit.loadtest.driver import LocustRun, master_gave_up

    out = search.out
    with LocustRun(plan, out, meta) as run:
        host = run.reach_target()
        print(
            f"authzkit capacity: {plan.scenario} against {host}{run.where()}, SLO "
            f"{search.slo.describe()}, {search.settings['step_time_s']:g} s steps from "
            f"{plan.load.rate:g}/s -> {out}",
            flush=True,
        )
        channel = StepChannel(out, run.start(["--capacity-dir", str(out)]))
        try:
            _follow(plan, channel, search)
        except SearchFailed as exc:
            gave_up = master_gave_up(plan, out, run.wait_end(STOP_S))
            if gave_up is not None:
                return gave_up
            search.save()
            print(f"authzkit capacity: {exc}", file=sys.stderr)
            return 1
        finally:
            channel.stop()
        run.wait_end(STOP_S)  # the run told to stop: its last calls and files
        channel.close()
    return None


def _follow(plan: RunPlan, channel: StepChannel, search: _Search) -> None:
    """The search, step by step, until it has its answer."""
    from authzkit.loadtest.capacity.output import step_line
    from authzkit.loadtest.capacity.results import step_result
    from authzkit.loadtest.capacity.search import answer, judge
    from authzkit.loadtest.record.face import Step

    channel.wait("ready", None, READY_S + plan.role.waits, "every process to be ready")
    lead = LEAD_REMOTE_S if plan.role.master else LEAD_S
    grace = search.slo.largest_ms / 1000.0 + 0.05
    step_time = float(search.settings["step_time_s"])
    rate = search.search.next_rate(search.steps)
    while rate is not None and len(search.steps) < MAX_STEPS:
        index = len(search.steps)
        step = Step(
            index,
            rate,
            time.time() + lead,
            step_time,
            float(search.settings["warm_up_s"]),
            grace,
        )
        channel.announce(step.message())
        seconds = lead + step_time + grace + STEP_SLACK_S
        merged = channel.wait("step", index, seconds, f"the tallies of step {index + 1}")
        verdict = judge(step_result(merged), search.slo)
        search.steps.append(verdict)
        search.histograms[str(index)] = {"latency": merged["latency"], "lag": merged["lag"]}
        search.save()
        if not plan.quiet:
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
