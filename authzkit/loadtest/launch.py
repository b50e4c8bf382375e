"""Driving one load-test run: the locustfile, locust as a child with progress lines, the
preflight, and the sandbox's counters while locust ran.

:mod:`~authzkit.loadtest.command` decides and checks; this module does. Nothing here
imports locust: it runs as ``python -m locust`` in a child process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.child import OUTPUT_FILE
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.plan import RunPlan
    from authzkit.loadtest.resources import Watch
    from authzkit.sandbox.process import SandboxProcess

PROGRESS_EVERY_S = 2.0
SAMPLE_EVERY_S = 1.0  # the processes' resources (authzkit.loadtest.resources)
GRACE_S = 90.0  # beyond --run-time: start-up, stop timeout, writing the reports

_LOCUSTFILE = '''"""Written by `authzkit loadtest`: the user class it ran, from authzkit itself."""

from authzkit.loadtest.record.users import {name}

__all__ = ["{name}"]
'''


def progress_line(elapsed: float, seconds: float, totals: dict[str, float]) -> str:
    """One progress line: the run's p95 so far (before the first answer ``-``: ``0 µs``
    read as a service answering instantly) and, once known, the p99 of the last
    :data:`~authzkit.loadtest.record.summary.RECENT_S` whole seconds
    (``last 2s p99 1.2 ms``: a slope shows as it comes)."""
    from authzkit.loadtest.read.units import duration
    from authzkit.loadtest.record.summary import RECENT_S

    p95 = duration(totals["p95_us"]) if totals["requests"] else "-"
    line = (
        f"  {elapsed:5.0f}s/{seconds:.0f}s  {totals['requests']:8.0f} requests  "
        f"{totals['failures']:5.0f} failures  {totals['rps']:7.1f} req/s  p95 {p95}"
    )
    recent = totals.get("recent_p99_us")
    return line if recent is None else f"{line}  last {RECENT_S}s p99 {duration(recent)}"


def progress(
    process: subprocess.Popen[bytes],
    out: Path,
    seconds: float,
    quiet: bool,
    watch: Watch | None = None,
    *,
    waits: float = 0.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Wait for locust, printing one line every few seconds (the p95 from the run's µs
    histograms so far, three significant digits: ``p95 430 µs``), and sampling the
    processes' resources once a second (``watch``); kill it past the deadline.

    The line counts the run, not a master's wait for its workers (``waits``, at most
    ``--expect-workers-max-wait``): its elapsed time is the seconds of load the run itself
    reports (``run_s``), out of ``seconds``; a master still waiting prints none."""
    from authzkit.loadtest.child import live_totals
    from authzkit.wire.children import stop_process

    started = clock()
    deadline = started + seconds + waits + GRACE_S
    next_line = started + PROGRESS_EVERY_S
    next_sample = started
    while process.poll() is None:
        now = clock()
        if now > deadline:
            print("authzkit loadtest: locust overran its run time; stopping it", file=sys.stderr)
            return stop_process(process)
        if watch is not None and now >= next_sample:
            next_sample += SAMPLE_EVERY_S
            watch.tick()
        if not quiet and now >= next_line:
            next_line += PROGRESS_EVERY_S
            totals = live_totals(out)
            elapsed = (totals or {}).get("run_s", None if waits else now - started)
            if totals and elapsed is not None:
                print(progress_line(elapsed, seconds, totals), flush=True)
        sleep(0.2)
    return int(process.returncode)


def write_locustfile(out: Path, user_class: str) -> Path:
    """The two-line locustfile of the run, importing the user class from authzkit itself."""
    out.mkdir(parents=True, exist_ok=True)
    locustfile = out / "locustfile.py"
    locustfile.write_text(_LOCUSTFILE.format(name=user_class), encoding="utf-8")
    return locustfile


def run_locust(
    command: list[str],
    env: dict[str, str],
    out: Path,
    seconds: float,
    quiet: bool,
    watch: Watch | None = None,
    waits: float = 0.0,
) -> int:
    """Locust as a child writing into ``out``, with progress lines (``seconds`` of load
    after at most ``waits`` for a master's workers); its exit code. An
    interrupt stops it (so it writes what it has) and goes on up. With ``watch``, the
    resources of locust, its workers and the sandbox are sampled each second and join
    ``summary.json`` at the end, an interrupted run's too."""
    from authzkit.loadtest.resources import write_resources
    from authzkit.wire.children import leave_interrupts_to_parent, stop_process

    # The run directory holds the locustfile locust imports: no __pycache__ beside the results.
    env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
    with (out / OUTPUT_FILE).open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=out,
            preexec_fn=leave_interrupts_to_parent,  # a Ctrl-C is ours to pass on, in order
        )
        if watch is not None:
            watch.locust_started(process.pid)
        try:
            return progress(process, out, seconds, quiet, watch, waits=waits)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (see interrupt.py): locust writes
            stop_process(process)  # its results on SIGTERM, then the run reports them
            raise
        finally:
            if watch is not None:
                write_resources(out, watch)


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


def reach_target(
    args: argparse.Namespace,
    plan: RunPlan,
    meta: dict[str, Any],
    *,
    sandbox: SandboxProcess | None,
    user_class: str,
    out: Path,
    private: Path,
) -> tuple[str, dict[str, str], Path | None]:
    """Start the sandbox the command owns (when it owns one), note the host in ``meta`` and
    run the preflight: the host, the child environment and the subjects file the users
    read. One order for ``authzkit loadtest`` and ``authzkit capacity``."""
    from authzkit.wire.children import child_env

    if sandbox is not None:
        sandbox.start()
        host, env = sandbox.base_url, child_env(sandbox.env())
    else:
        host, env = str(plan.settings.base_url), child_env()
    meta["host"] = host
    meta["preflight"], subjects = preflight(
        args, plan, host=host, sandbox=sandbox, user_class=user_class, out=out, private=private
    )
    return host, env, subjects


def preflight(
    args: argparse.Namespace,
    plan: RunPlan,
    *,
    host: str,
    sandbox: SandboxProcess | None,
    user_class: str,
    out: Path,
    private: Path,
) -> tuple[dict[str, Any], Path | None]:
    """The preflight when it is due (what run.json says of it, and the subjects file
    locust gets); a :class:`ConfigError` when every subject asked was refused.

    Due unless ``--no-preflight``, and on the sandbox started here only when an option or
    variable named the scenario's action: its own demo actions need no asking."""
    from authzkit.loadtest.plan import user_options
    from authzkit.loadtest.preflight import check_before_load
    from authzkit.wire.config import Settings

    subjects = Path(args.subjects).resolve() if args.subjects is not None else None
    if args.no_preflight:
        return {"ran": False, "reason": "--no-preflight"}, subjects
    if sandbox is not None and not plan.named:
        return {"ran": False, "reason": "the sandbox started here, its demo actions"}, subjects
    settings = plan.settings if sandbox is None else Settings.from_env(sandbox.env(), dotenv=None)
    result, subjects = check_before_load(
        settings,
        host=host,
        kind=plan.kind,
        actions=plan.actions,
        user_class=user_class,
        subjects=subjects,
        options=user_options(args.locust_args),
        out=out,
        private=private,
    )
    if result.fatal:
        raise ConfigError(result.error_message())
    print(result.summary(), flush=True)
    for line in result.warnings():
        print(f"authzkit loadtest: warning: {line}", file=sys.stderr, flush=True)
    if getattr(args, "master", False) and result.dropped and args.subjects is not None:
        # The workers read the path the master forwards: a copy here is not on their side.
        print(
            f"authzkit loadtest: warning: the workers read {args.subjects} as it is "
            f"(a filtered copy would not reach them): remove the rows named above from it",
            file=sys.stderr,
            flush=True,
        )
        subjects = Path(args.subjects).resolve()
    return {
        "ran": True,
        "requests": sum(result.requests.values()),
        "subjects_asked": len(result.checks),
        "dropped": list(result.dropped),
    }, subjects


def master_gave_up(args: argparse.Namespace, out: Path, code: int) -> int | None:
    """After a ``--master`` run: when Locust gave up waiting for the workers, say so in one
    line, write the summary the report reads (who connected, who never reported) and
    return :data:`~authzkit.loadtest.roles.GAVE_UP`; None when the run went ahead."""
    from authzkit.loadtest.record.summary import build_summary
    from authzkit.loadtest.record.workers import never_connected, read_roster
    from authzkit.loadtest.roles import GAVE_UP, GAVE_UP_LOG, gave_up_message

    if not getattr(args, "master", False) or code == 0 or (out / "summary.json").exists():
        return None
    try:
        log = (out / "locust.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        log = ""
    if GAVE_UP_LOG not in log:
        return None
    workers = never_connected(args.expect_workers, read_roster(out))
    summary = build_summary(
        requests=0,
        failures=0,
        p95_ms=0.0,
        errors=[],
        counters=[],
        max_p95_ms=args.max_p95_ms,
        max_failure_ratio=args.max_failure_ratio,
        workers=workers,
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"authzkit loadtest: {gave_up_message(args, workers['connected'])}", file=sys.stderr)
    return GAVE_UP


def run_worker(args: argparse.Namespace, user_class: str) -> int:
    """A Locust worker running ``user_class`` for the master at ``--master-host``, once its
    settings and subjects file are checked (a :class:`ConfigError` naming what is wrong,
    before it connects); its exit code. It prints to this process's output and stops when
    the master ends the run (or, never reached, after Locust's own retries); Ctrl-C or
    SIGTERM stops it first (exit 128 + the signal)."""
    import tempfile

    from authzkit.loadtest.arguments import check_locust_args
    from authzkit.loadtest.child import worker_command
    from authzkit.loadtest.interrupt import Interrupted, interruptible
    from authzkit.loadtest.plan import plan_run
    from authzkit.loadtest.roles import MASTER_LOST, check_role, master_lost_message, role_options
    from authzkit.wire.children import child_env, leave_interrupts_to_parent, stop_process

    check_role(args)
    plan_run(args)
    extra = role_options(args) + check_locust_args(args.locust_args)
    with tempfile.TemporaryDirectory(prefix="authzkit-worker-") as folder:
        locustfile = write_locustfile(Path(folder), user_class)
        command = worker_command(locustfile, user_class, extra)
        print(
            f"authzkit loadtest: worker ({user_class}) for the master at "
            f"{args.master_host}:{args.master_port}",
            flush=True,
        )
        process = subprocess.Popen(
            command,
            env=child_env(),
            cwd=folder,
            stdin=subprocess.DEVNULL,
            preexec_fn=leave_interrupts_to_parent,
        )
        try:
            with interruptible():
                code = process.wait()
        except Interrupted as stopped:
            stop_process(process)
            return stopped.exit_code
    if code == MASTER_LOST:
        print(f"authzkit loadtest: {master_lost_message(args)}", file=sys.stderr, flush=True)
    return code


__all__ = [
    "GRACE_S",
    "PROGRESS_EVERY_S",
    "counted_since",
    "master_gave_up",
    "preflight",
    "progress",
    "progress_line",
    "reach_target",
    "run_locust",
    "run_worker",
    "write_locustfile",
]
