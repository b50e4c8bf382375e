"""``authzkit loadtest`` and ``authzkit report``: Locust as a subprocess, results in pandas.

``loadtest`` starts a sandbox process when no ``AUTHZKIT_BASE_URL`` is configured (speaking
``--dialect draft|published``: the users then reach its draft token path, or its OIDC issuer
with ``private_key_jwt``, through the ``AUTHZKIT_*`` variables it exports), writes a
two-line locustfile into the output directory (it imports the user class from
:mod:`authzkit.loadtest.users`, so an installed package needs no checkout), runs ``python -m
locust`` headless with a run-time limit, prints progress, then writes the report. With
``--rate`` it runs the open model instead (``OPEN_SCENARIOS``: one scheduling user per
process; see :mod:`authzkit.loadtest.schedule`).
Before locust starts, the actions are chosen (``--action``/``--challenge-action``, else
``AUTHZKIT_PLAIN_ACTION``/``AUTHZKIT_CHALLENGE_ACTION``, else the sandbox's demo actions on
the sandbox it starts; missing on another environment: exit 2) and a preflight asks once per
distinct subject (:mod:`authzkit.loadtest.preflight`): nothing to load when nobody passes.
The sandbox's fault flags (``--latency-ms`` …) go to the sandbox process it starts.
``report`` rebuilds the report of a run directory and compares two runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.errors import ConfigError
from authzkit.sandbox.command import add_fault_options, fault_arguments
from authzkit.spec import DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION, DIALECTS

if TYPE_CHECKING:
    from authzkit.loadtest.plan import RunPlan
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
TOKEN_SCENARIO_TTL = 4  # a short sandbox token, so refreshes happen within a short run
PROGRESS_EVERY_S = 2.0
GRACE_S = 90.0  # beyond --run-time: start-up, stop timeout, writing the reports

_LOCUSTFILE = '''"""Written by `authzkit loadtest`: the user class it ran, from authzkit itself."""

from authzkit.loadtest.users import {name}

__all__ = ["{name}"]
'''


def register(subparsers: Any) -> None:
    """Add ``authzkit loadtest`` and ``authzkit report``."""
    run = subparsers.add_parser(
        "loadtest", help="run a Locust load test (a sandbox is started when none is configured)",
        description="Run Locust headless as a subprocess and write its CSV/JSON/HTML plus "
                    "report.html into --out. Without AUTHZKIT_BASE_URL a sandbox process is "
                    "started for the run.")
    run.add_argument("--scenario", choices=sorted(SCENARIOS), default="authorize",
                     help="authorize (plain), challenge (full round trip) or token "
                          "(refresh under load); default authorize")
    run.add_argument("--fast", action="store_true",
                     help="use Locust's FastHttpUser client (authorize and challenge)")
    run.add_argument("-u", "--users", type=int, default=10, help="concurrent users (default 10)")
    run.add_argument("-r", "--spawn-rate", type=float, default=None,
                     help="users started per second (default: all at once)")
    run.add_argument("-t", "--run-time", default="30s",
                     help="how long to run, e.g. 30s, 2m (default 30s)")
    run.add_argument("--out", type=Path, default=None,
                     help="output directory (default loadtest-out/<scenario>-<time>)")
    run.add_argument("--wait-time", default="0",
                     help="think time per user: seconds or a range like 0.5-2 (default 0)")
    run.add_argument("--processes", type=int, default=None,
                     help="Locust worker processes on this machine (-1 = one per core)")
    run.add_argument("--subjects", type=Path, default=None,
                     help="CSV of subject tokens and answers (required for a real service)")
    run.add_argument("--token-ttl", type=int, default=None,
                     help=f"sandbox token lifetime in s (default {TOKEN_SCENARIO_TTL} for "
                          f"the token scenario, else the sandbox's)")
    run.add_argument("--dialect", choices=DIALECTS, default=DIALECTS[0],
                     help="what the started sandbox speaks: SPEC.md's draft (default) or the "
                          "provider's published API (OIDC token endpoint with private_key_jwt, "
                          "bare 401s); ignored with AUTHZKIT_BASE_URL")
    run.add_argument("--max-p95-ms", type=float, default=None,
                     help="exit 1 when the aggregated p95 exceeds this")
    run.add_argument("--max-failure-ratio", type=float, default=None,
                     help="exit 1 when failures / requests exceeds this")
    run.add_argument("--rate", type=float, default=None, metavar="R",
                     help="open model: R requests (challenge: flows) per second in total, "
                          "started on schedule whatever the answers; latencies from each "
                          "intended start (default: closed loop, --users back to back)")
    run.add_argument("--arrivals", choices=("constant", "poisson"), default="constant",
                     help="with --rate: evenly spaced starts (default) or a Poisson process")
    run.add_argument("--arrivals-seed", type=int, default=None, metavar="N",
                     help="with --rate --arrivals poisson: seed for reproducible arrivals")
    run.add_argument("--max-in-flight", type=int, default=None, metavar="N",
                     help="with --rate: calls in flight per process at most (default 1000)")
    run.add_argument("--action", default=None, metavar="NAME",
                     help=f"action that needs no challenge (authorize and token scenarios; "
                          f"default AUTHZKIT_PLAIN_ACTION, on the sandbox started here "
                          f"{DEFAULT_PLAIN_ACTION}; required on another environment)")
    run.add_argument("--challenge-action", default=None, metavar="NAME",
                     help=f"action that demands a challenge (challenge scenario; default "
                          f"AUTHZKIT_CHALLENGE_ACTION, on the sandbox started here "
                          f"{DEFAULT_CHALLENGE_ACTION}; required on another environment)")
    run.add_argument("--no-preflight", action="store_true",
                     help="skip the preflight (one authorize per distinct subject, at most "
                          "20, before any load; exit 2 when every one is refused)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    run.add_argument("locust_args", nargs="*", metavar="-- LOCUST_ARG",
                     help="anything after -- goes to locust unchanged")
    add_fault_options(run, note=" (passed to the sandbox process started here; refused with "
                                "AUTHZKIT_BASE_URL)")
    run.set_defaults(run=run_loadtest)

    report = subparsers.add_parser(
        "report", help="tables, plots and report.html of a load-test run directory",
        description="Percentiles per row, throughput, failures by error type; PNGs and a "
                    "self-contained report.html. With --compare, deltas against another run.")
    report.add_argument("directory", type=Path, help="a directory `authzkit loadtest` wrote")
    report.add_argument("--compare", type=Path, metavar="OTHER_DIR",
                        help="baseline run: print deltas (this run minus the baseline)")
    report.add_argument("--max-regression", type=float, default=None, metavar="PCT",
                        help="with --compare: exit 1 when a row's latency grew by more than PCT "
                             "percent (p99 from the HdrHistograms when both runs have them, "
                             "else Locust's p95) or its failure ratio grew at all")
    report.set_defaults(run=run_report)


def _default_out(scenario: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path("loadtest-out") / f"{scenario}-{stamp}"  # git-ignored


def _progress(process: subprocess.Popen[bytes], out: Path, seconds: float, quiet: bool) -> int:
    """Wait for locust, printing one line every few seconds; kill it past the deadline."""
    from authzkit.loadtest.runner import live_totals
    from authzkit.sandbox.process import stop_process

    started = time.monotonic()
    deadline = started + seconds + GRACE_S
    next_line = started + PROGRESS_EVERY_S
    while process.poll() is None:
        now = time.monotonic()
        if now > deadline:
            print("authzkit loadtest: locust overran its run time; stopping it", file=sys.stderr)
            return stop_process(process)
        if not quiet and now >= next_line:
            next_line += PROGRESS_EVERY_S
            totals = live_totals(out)
            if totals:
                print(f"  {now - started:5.0f}s/{seconds:.0f}s  {totals['requests']:8.0f} "
                      f"requests  {totals['failures']:5.0f} failures  {totals['rps']:7.1f} "
                      f"req/s  p95 {totals['p95']:.0f} ms", flush=True)
        time.sleep(0.2)
    return int(process.returncode)


def _write_locustfile(out: Path, user_class: str) -> Path:
    """The two-line locustfile of the run, importing the user class from authzkit itself."""
    out.mkdir(parents=True, exist_ok=True)
    locustfile = out / "locustfile.py"
    locustfile.write_text(_LOCUSTFILE.format(name=user_class), encoding="utf-8")
    return locustfile


def _run_locust(command: list[str], env: dict[str, str], out: Path, seconds: float,
                quiet: bool) -> int:
    """Locust as a child writing into ``out``, with progress lines; its exit code."""
    from authzkit.sandbox.process import stop_process

    with (out / "locust.out").open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, cwd=out)
        try:
            return _progress(process, out, seconds, quiet)
        except KeyboardInterrupt:
            return stop_process(process)


def _report(out: Path, code: int) -> int:
    """Print the summary and write report.html; a run without results says why."""
    if not (out / "stats.json").exists():
        tail = (out / "locust.out").read_text(encoding="utf-8", errors="replace")[-3000:]
        print(f"authzkit loadtest: locust wrote no results (exit {code}):\n{tail}",
              file=sys.stderr)
        return code or 1
    from authzkit.loadtest import report
    from authzkit.loadtest.html import write_html

    run = report.load_run(out)
    path = write_html(run)
    print(report.summary_text(run))
    print(f"report: {path}")
    return code


def counted_since(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The sandbox's counters (numbers, and per-name numbers) minus an earlier snapshot:
    what it counted in between (a per-name count that did not change is left out)."""
    counted: dict[str, Any] = {}
    for key, value in after.items():
        earlier = before.get(key)
        if isinstance(value, dict):
            inner = counted_since(value, earlier if isinstance(earlier, dict) else {})
            counted[key] = {k: v for k, v in inner.items() if v != 0}
        elif isinstance(value, int | float) and isinstance(earlier, int | float):
            counted[key] = value - earlier
        else:
            counted[key] = value
    return counted


def _preflight(args: argparse.Namespace, plan: RunPlan, *, host: str,
               sandbox: SandboxProcess | None, user_class: str, out: Path,
               private: Path) -> tuple[dict[str, Any], Path | None]:
    """The preflight when it is due (what run.json says of it, and the subjects file
    locust gets); a :class:`ConfigError` when every subject asked was refused.

    Due unless ``--no-preflight``, and on the sandbox started here only when an option or
    variable named the scenario's action: its own demo actions need no asking."""
    from authzkit.config import Settings
    from authzkit.loadtest.plan import user_options
    from authzkit.loadtest.preflight import check_before_load

    subjects = args.subjects.resolve() if args.subjects is not None else None
    if args.no_preflight:
        return {"ran": False, "reason": "--no-preflight"}, subjects
    if sandbox is not None and not plan.named:
        return {"ran": False, "reason": "the sandbox started here, its demo actions"}, subjects
    settings = plan.settings if sandbox is None else Settings.from_env(sandbox.env(),
                                                                       dotenv=None)
    result, subjects = check_before_load(
        settings, host=host, kind=plan.kind, actions=plan.actions, user_class=user_class,
        subjects=subjects, options=user_options(args.locust_args), out=out, private=private)
    if result.fatal:
        raise ConfigError(result.error_message())
    print(result.summary(), flush=True)
    for line in result.warnings():
        print(f"authzkit loadtest: warning: {line}", file=sys.stderr, flush=True)
    return {"ran": True, "requests": sum(result.requests.values()),
            "subjects_asked": len(result.checks), "dropped": list(result.dropped)}, subjects


def run_loadtest(args: argparse.Namespace) -> int:
    """Run one load test; the exit code is locust's (thresholds decide it when given), 2 on
    a configuration error or a preflight that no subject passed (then no load is sent)."""
    try:
        return _run_loadtest(args)
    except ConfigError as exc:
        print(f"authzkit loadtest: {exc}", file=sys.stderr)
        return 2


def _run_loadtest(args: argparse.Namespace) -> int:
    from authzkit.loadtest.plan import locust_options, plan_run, process_count
    from authzkit.loadtest.runner import locust_command
    from authzkit.sandbox.process import SandboxProcess, child_env

    plan = plan_run(args)
    user_class = SCENARIOS[args.scenario][1 if args.fast else 0]
    if args.rate is not None:  # the open model: one scheduling user per process
        user_class = OPEN_SCENARIOS[args.scenario]
        args.users = process_count(args.processes)
    out = (args.out or _default_out(args.scenario)).resolve()
    locustfile = _write_locustfile(out, user_class)
    token_ttl = args.token_ttl or (TOKEN_SCENARIO_TTL if args.scenario == "token" else None)
    # The sandbox's own log (it announces its demo credentials) stays out of the run dir.
    sandbox = (SandboxProcess(token_ttl=token_ttl, dialect=args.dialect,
                              options=fault_arguments(plan.faults))
               if plan.settings.uses_sandbox else None)
    meta: dict[str, Any] = {
        "scenario": args.scenario, "user_class": user_class, "users": args.users,
        "spawn_rate": args.spawn_rate or args.users, "run_time": args.run_time,
        "wait_time": args.wait_time, "processes": args.processes,
        "rate": args.rate, "arrivals": args.arrivals if args.rate else None,
        "max_in_flight": args.max_in_flight, "actions": plan.actions,
        "sandbox": sandbox is not None, "token_ttl": token_ttl if sandbox else None,
        "dialect": args.dialect if sandbox else None,
        "faults": plan.faults if sandbox else None,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
    private = Path(tempfile.mkdtemp(prefix="authzkit-loadtest-"))  # a filtered subjects file
    try:
        if sandbox is not None:
            sandbox.start()
            host, env = sandbox.base_url, child_env(sandbox.env())
        else:
            host, env = str(plan.settings.base_url), child_env()
        meta["host"] = host
        meta["preflight"], subjects = _preflight(args, plan, host=host, sandbox=sandbox,
                                                 user_class=user_class, out=out,
                                                 private=private)
        command = locust_command(locustfile, [user_class], host=host, users=args.users,
                                 spawn_rate=args.spawn_rate or args.users,
                                 run_time=args.run_time, out=out,
                                 extra=locust_options(args, plan, subjects))
        meta["command"] = command[1:]  # secrets travel in the environment, never here
        # The draft is the default: only the other dialect is named (notebook outputs show this).
        where = "" if sandbox is None else (
            " (sandbox)" if args.dialect == DIALECTS[0] else f" (sandbox, {args.dialect} dialect)")
        print(f"authzkit loadtest: {user_class} x {args.users} for {args.run_time} against "
              f"{host}{where} -> {out}", flush=True)
        before = sandbox.admin().stats() if sandbox is not None else {}
        code = _run_locust(command, env, out, plan.seconds, args.quiet)
        if sandbox is not None:  # what it counted while locust ran (not the preflight)
            (out / "sandbox_stats.json").write_text(json.dumps(
                counted_since(sandbox.admin().stats(), before), indent=2) + "\n",
                encoding="utf-8")
    finally:
        if sandbox is not None:
            sandbox.stop()
        shutil.rmtree(private, ignore_errors=True)
    meta.update(exit_code=code,
                finished_at=datetime.now(UTC).isoformat(timespec="seconds"))
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return _report(out, code)


def run_report(args: argparse.Namespace) -> int:
    """Print the tables, write the PNGs and report.html; compare when asked."""
    from authzkit.loadtest import report
    from authzkit.loadtest.html import write_html

    try:
        run = report.load_run(args.directory)
        baseline = report.load_run(args.compare) if args.compare else None
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from exc
    print(report.summary_text(run))
    print(f"report: {write_html(run, baseline=baseline)}")
    if baseline is None:
        if args.max_regression is not None:
            raise ConfigError("--max-regression needs --compare OTHER_DIR")
        return 0
    comparison = report.compare(run, baseline)
    print(f"\ncompared with {args.compare} (change = this run vs the baseline):")
    print(report.format_comparison(comparison))
    if args.max_regression is None:
        return 0
    found = report.regressions(comparison, max_latency_increase=args.max_regression / 100.0)
    for line in found:
        print(f"regression: {line}")
    return 1 if found else 0


__all__ = ["OPEN_SCENARIOS", "SCENARIOS", "counted_since", "register", "run_loadtest",
           "run_report"]
