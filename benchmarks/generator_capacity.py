"""How many decisions per second one generator core drives, and how many workers a target needs.

    python benchmarks/generator_capacity.py [--seconds 6] [--rounds 1] [--skip-open-max]

1. Decisions/s per generator core for each closed-loop user class: 1 / (CPU seconds of the
   Locust process per decision), measured inside the child over a window after ramp-up (user
   + sys from ``resource``; ``overhead_users.py --cpu-file``). A decision is one ``POST
   authorize`` for the plain classes and one challenge round trip (``FLOW`` row: authorize
   → 403 → JWE → authorize with the solution) for the challenge classes. The sandbox shares
   the machine's cores and is often the bottleneck of the requests/s; the generator's CPU
   per decision is what sizes a fleet of workers, whatever the sandbox manages.
2. Workers (one core each, a Locust ``--processes``/worker process per core) that 10k and
   100k decisions/s need with 30 % headroom: ``ceil(target x 1.3 / per-core rate)``.
3. The open model's maximum on-schedule rate of one process against the closed-loop maximum
   of one ``AuthorizeUser`` process on the same sandbox (``FastAuthorizeUser``'s printed
   beside it): the open model up a ladder of 0.5x steps of the closed-loop maximum until two
   rungs in a row miss; on schedule = the schedule's lag p99 <= 5 ms (``latency_truth.py``'s
   lag limit, what ``--max-lag-ms 5`` checks; the late share is printed, not judged: on
   a machine shared with other work a few % of starts are late at any rate). Target: >= 1.0x
   the ``AuthorizeUser`` maximum. The open model's workers line comes from that maximum,
   not from CPU per call: above ~1,000 starts/s its scheduler keeps the event loop turning
   between starts instead of sleeping, so its process shows a full core at any such rate.

Prints lines a docs page can quote; asserts nothing. CPU per decision is a property of the
generator, but on a loaded machine it still moves by ±10 %: ``--rounds N`` prints medians.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from arguments import at_least
from latency_truth import LAG_P99_LIMIT_US, lag_ok, run_locust

from authzkit.loadtest.child import locust_command
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

USERS_FILE = Path(__file__).with_name("overhead_users.py")
HEADROOM = 0.30
TARGETS = (10_000, 100_000)
# class → (users, the row that counts its decisions)
CLASSES: dict[str, tuple[int, str]] = {
    "FastAuthorizeUser": (10, "POST authorize"),
    "AuthorizeUser": (10, "POST authorize"),
    "FastChallengeUser": (10, "FLOW challenge round trip"),
    "ChallengeUser": (10, "FLOW challenge round trip"),
}
CLOSED_USERS = 20
# rungs of the ladder, in fractions of AuthorizeUser's maximum: up by 0.5x until two in a row
# miss (the last rung only bounds a run on a machine that never misses)
FRACTIONS = tuple(step / 2 for step in range(1, 41))
TARGET_RATIO = 1.0


def cpu_per_decision(sandbox: SandboxProcess, user_class: str, seconds: int,
                     workdir: Path) -> tuple[float, int]:
    """(CPU seconds, decisions) of one headless run's measured window."""
    users, row = CLASSES[user_class]
    cpu_file = workdir / f"cpu-{user_class}.json"
    cpu_file.unlink(missing_ok=True)
    command = locust_command(
        USERS_FILE, [user_class], host=sandbox.base_url, users=users, spawn_rate=users * 10,
        run_time=f"{seconds + 1}s",
        extra=["--cpu-file", str(cpu_file), "--loglevel", "WARNING"])
    subprocess.run(command, env=child_env(sandbox.env()), cwd=workdir, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds + 90)
    if not cpu_file.exists():
        raise SystemExit(f"{user_class}: the run recorded no CPU window")
    measured = json.loads(cpu_file.read_text())
    return float(measured["cpu_s"]), int(measured["rows"].get(row, 0))


def workers_line(label: str, per_core: float) -> str:
    """The arithmetic of ``ceil(target x (1 + headroom) / per_core)`` for every target."""
    parts = []
    for target in TARGETS:
        needed = target * (1 + HEADROOM)
        parts.append(f"{target:,}/s x {1 + HEADROOM:.1f} = {needed:,.0f}/s / {per_core:,.0f}/s "
                     f"= {needed / per_core:.2f} → {math.ceil(needed / per_core)} workers")
    return f"  {label}: " + "; ".join(parts)


def capacity(seconds: int, rounds: int, workdir: Path) -> list[str]:
    """Parts 1 and 2: per-core decisions/s of every class (median of ``rounds``) and the
    workers the targets need."""
    per_class: dict[str, list[float]] = {name: [] for name in CLASSES}
    totals: dict[str, int] = dict.fromkeys(CLASSES, 0)
    with SandboxProcess(token_ttl=3600) as sandbox:
        for _ in range(rounds):
            for user_class in CLASSES:
                cpu, decisions = cpu_per_decision(sandbox, user_class, seconds, workdir)
                if decisions:
                    per_class[user_class].append(cpu / decisions)
                    totals[user_class] += decisions
    lines = [f"decisions/s per generator core (1 / CPU seconds per decision of the Locust "
             f"process, median of {rounds} run(s) of {seconds} s; 2-core machine shared "
             f"with the sandbox):"]
    rates: dict[str, float] = {}
    for user_class, (users, row) in CLASSES.items():
        measured = per_class[user_class]
        if not measured:
            lines.append(f"  {user_class}: no decisions measured")
            continue
        cpu = statistics.median(measured)
        rates[user_class] = 1 / cpu
        what = "flows" if row.startswith("FLOW") else "decisions"
        how = f"{users} users, closed loop"
        lines.append(f"  {user_class}: {1 / cpu:,.0f} {what}/s per core ({cpu * 1e6:.0f} us "
                     f"CPU per {what[:-1]}; {how}; {totals[user_class]:,} {what} measured)")
    lines.append(f"workers (1 core each) for a target with {HEADROOM:.0%} headroom: "
                 f"ceil(target x {1 + HEADROOM:.1f} / per-core rate)")
    lines += [workers_line(name, rate) for name, rate in rates.items()]
    return lines


def _run(sandbox: SandboxProcess, user_class: str, *, users: int, seconds: int, out: Path,
         extra: list[str] | None = None) -> dict[str, Any]:
    """``latency_truth.run_locust``, once more if a run recorded nothing (on a machine shared
    with other work a run now and then starts too late to record a row)."""
    try:
        return run_locust(sandbox, user_class, users=users, seconds=seconds, out=out,
                          extra=extra)
    except SystemExit as exc:
        print(f"  ({user_class}: {str(exc).splitlines()[0]}; run again)", flush=True)
        return run_locust(sandbox, user_class, users=users, seconds=seconds,
                          out=out.with_name(out.name + "-again"), extra=extra)


def open_versus_closed(seconds: int, workdir: Path) -> list[str]:
    """Part 3: the closed-loop maxima of one process, then the open model up a ladder of
    fractions of AuthorizeUser's until two rungs in a row miss the lag limit."""
    with SandboxProcess(key_size=2048, token_ttl=3600) as sandbox:
        closed = {}
        for user_class in ("AuthorizeUser", "FastAuthorizeUser"):
            run = _run(sandbox, user_class, users=CLOSED_USERS, seconds=seconds,
                       out=workdir / f"closed-{user_class}")
            closed[user_class] = float(run["rps"])
        base = closed["AuthorizeUser"]
        if base <= 0:
            raise SystemExit("the closed-loop run measured no requests per second")
        lines = [f"closed loop, one process, {CLOSED_USERS} users, {seconds} s: AuthorizeUser "
                 f"{base:.0f}/s, FastAuthorizeUser {closed['FastAuthorizeUser']:.0f}/s"]
        tried: list[tuple[int, dict[str, Any]]] = []
        misses = 0
        for fraction in FRACTIONS:
            rate = round(base * fraction)
            run = _run(sandbox, "OpenAuthorizeUser", users=1, seconds=seconds,
                       out=workdir / f"open-{fraction:g}",
                       extra=["--rate", str(rate), "--arrivals", "constant"])
            schedule = run["schedule"]
            tried.append((rate, schedule))
            verdict = "on schedule" if lag_ok(schedule) else "OFF"
            lines.append(f"  open {rate}/s ({fraction:.1f}x): achieved {run['rps']:.0f}/s, lag "
                         f"p99 {schedule['lag_p99_us'] / 1000:.2f} ms, late "
                         f"{schedule['late'] / max(schedule['intended'], 1):.1%} -> {verdict}")
            misses = 0 if lag_ok(schedule) else misses + 1
            if misses == 2:
                break
    best = max((rate for rate, schedule in tried if lag_ok(schedule)), default=0)
    ratio = best / base
    # the ladder's rungs are whole requests/s: the 1.0x rung is round(base), not base
    verdict = "PASS" if best >= round(base * TARGET_RATIO) else "FAIL"
    fast = closed["FastAuthorizeUser"]
    lines.append(f"open model max on-schedule rate per process: {best}/s = {ratio:.2f}x the "
                 f"closed-loop AuthorizeUser max {base:.0f}/s (target >= {TARGET_RATIO:.1f}x: "
                 f"{verdict}); {best / fast:.2f}x FastAuthorizeUser's {fast:.0f}/s (on schedule:"
                 f" lag p99 <= {LAG_P99_LIMIT_US // 1000} ms; highest rung tried "
                 f"{tried[-1][0]}/s)")
    if best:
        lines.append(workers_line("OpenAuthorizeUser (its on-schedule max per process)", best))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=at_least(2), default=5, help="per run (default 5)")
    parser.add_argument("--rounds", type=at_least(1), default=1,
                        help="runs of each class (default 1)")
    parser.add_argument("--skip-open-max", action="store_true", help="parts 1 and 2 only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="authzkit-bench-") as tmp:
        workdir = Path(tmp)
        for line in capacity(args.seconds, args.rounds, workdir):
            print(line, flush=True)
        if not args.skip_open_max:
            for line in open_versus_closed(args.seconds, workdir):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
