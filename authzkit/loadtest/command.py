"""``authzkit loadtest`` and ``authzkit report``: Locust as a subprocess, results in pandas.

``loadtest`` builds the run's plan (:mod:`authzkit.loadtest.plan`: every option checked,
one line and exit 2 before anything starts), claims the run directory, drives Locust
(:mod:`authzkit.loadtest.driver`: the sandbox when none is configured, the preflight, the
child, progress lines) and writes run.json and the report
(:mod:`authzkit.loadtest.reporting`, which also holds ``report``). Ctrl-C or SIGTERM stops
Locust and the sandbox and keeps a partial report; see docs/loadtest.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.arguments import add_loadtest_arguments, add_report_arguments, require_extra
from authzkit.loadtest.plan import OPEN_SCENARIOS, SCENARIOS
from authzkit.loadtest.reporting import report_run, run_report
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.driver import LocustRun
    from authzkit.loadtest.interrupt import Interrupted
    from authzkit.loadtest.plan import RunPlan


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


def _run_loadtest(args: argparse.Namespace) -> int:
    from authzkit.loadtest.driver import run_worker, write_locustfile
    from authzkit.loadtest.interrupt import interruptible
    from authzkit.loadtest.plan import plan_run
    from authzkit.loadtest.run_directory import claim, release, run_json, write_run_json

    require_extra("worker" if args.worker else "loadtest")
    plan = plan_run(args)
    if plan.role.worker:
        return run_worker(plan)
    if plan.soak_presets:
        print(f"authzkit loadtest: --soak: {' '.join(plan.soak_presets)}", flush=True)
    out = claim(plan.out, plan.out_name, overwrite=plan.overwrite)  # checked: now it is ours
    try:
        write_locustfile(out, plan.user_class)
        meta = run_json(plan)
        with interruptible():
            code, stopped = _execute(plan, out, meta)
        meta["exit_code"] = code
        if stopped is not None:
            meta["interrupted"] = stopped.name
        write_run_json(out, meta)
        return report_run(out, code, stopped, html=plan.report)
    finally:
        release(out)


def _execute(plan: RunPlan, out: Path, meta: dict[str, Any]) -> tuple[int, Interrupted | None]:
    """The run, Locust and the sandbox stopped whatever happens: Locust's exit code, and
    the interrupt that stopped the run, if one did."""
    from authzkit.loadtest.driver import LocustRun
    from authzkit.loadtest.interrupt import Interrupted

    try:
        with LocustRun(plan, out, meta) as run:
            return _drive(run), None
    except Interrupted as exc:
        return exc.exit_code, exc


def _drive(run: LocustRun) -> int:
    from authzkit.loadtest.driver import counted_since, master_gave_up

    plan, out = run.plan, run.out
    host = run.reach_target()
    print(
        f"authzkit loadtest: {plan.user_class} x {plan.load.users} for {plan.load.run_time} "
        f"against {host}{run.where()} -> {out}",
        flush=True,
    )
    before = run.sandbox_stats()
    watch = run.new_watch()
    run.start(watch=watch)
    code = run.follow(watch)
    gave_up = master_gave_up(plan, out, code)
    if gave_up is not None:
        return gave_up
    if run.sandbox is not None:  # what it counted while locust ran (not the preflight)
        (out / "sandbox_stats.json").write_text(
            json.dumps(counted_since(run.sandbox_stats(), before), indent=2) + "\n",
            encoding="utf-8",
        )
    return code


__all__ = ["OPEN_SCENARIOS", "SCENARIOS", "register", "run_loadtest", "run_report"]
