"""What authzkit's Locust users cost on top of Locust, and how few token calls they make.

    python benchmarks/locust_overhead.py [--users 10] [--seconds 6] [--rounds 5] [--concurrent]

1. CPU time of the Locust process per request (user + sys over requests, measured inside the
   child with ``resource`` over a window after ramp-up; see ``overhead_users.py``):
   ``FastAuthorizeUser`` vs a bare ``FastHttpUser`` and ``AuthorizeUser`` vs a bare
   ``HttpUser`` posting the same bytes, against the same sandbox process, alternating the
   two of a pair (bare first in even rounds, ours first in odd ones) so that machine noise
   and drift hit both. The Fast users send through geventhttpclient's pool straight
   (``DirectTransport``), not ``FastHttpSession``: their line prices that choice too. The
   bare runs are Locust alone: authzkit's request listener (the µs histograms and the
   per-second timeline) is detached there, so the ratio prices the recording too. Requests/s
   alone would only measure the sandbox whenever it is the bottleneck; CPU per request
   measures the client side. Target: <= 1.05x, judged on the median of the paired rounds'
   ratios (PASS/FAIL on each line). ``--concurrent`` runs the two of a pair at the same time
   instead, two processes on the same sandbox: on a machine loaded by other work both
   windows then see the same load (one after the other, a burst that lands on one run of a
   pair moves that round's ratio by 10-30 %).
2. Token calls for 500 ``TokenRefreshUser`` users over 10 token lifetimes, counted by the
   sandbox. A "lifetime" here is how long the provider uses a token: ``expiresIn`` minus
   the proportional refresh margin (a quarter of a short lifetime), so a 2 s sandbox token
   is used for 1.5 s and 10 lifetimes take 15 s. A per-user login would make 5,000 calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arguments import at_least

from authzkit.client.token import refresh_margin
from authzkit.loadtest.child import locust_command
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

USERS_FILE = Path(__file__).with_name("overhead_users.py")
PAIRS = (("FastAuthorizeUser", "BareFastHttpUser"), ("AuthorizeUser", "BareHttpUser"))
TARGET_RATIO = 1.05
TOKEN_USERS = 500
TOKEN_TTL = 2
TOKEN_LIFETIMES = 10
TOKEN_TARGET = 11


def start_run(sandbox: SandboxProcess, user_class: str, users: int, seconds: int,
              workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A headless run of ``user_class`` started, and the file its CPU window goes to."""
    cpu_file = workdir / f"cpu-{user_class}.json"
    cpu_file.unlink(missing_ok=True)
    command = locust_command(USERS_FILE, [user_class], host=sandbox.base_url, users=users,
                             spawn_rate=users * 10, run_time=f"{seconds}s",
                             extra=["--cpu-file", str(cpu_file), "--loglevel", "WARNING"])
    process = subprocess.Popen(command, env=child_env(sandbox.env()), cwd=workdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, cpu_file


def finish_run(user_class: str, process: subprocess.Popen[bytes], cpu_file: Path,
               seconds: int) -> tuple[float, int]:
    """(CPU seconds, requests) of a started run's measured window, once it ended."""
    try:
        process.wait(timeout=seconds + 90)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if not cpu_file.exists():
        raise SystemExit(f"{user_class}: the run recorded no CPU window")
    measured = json.loads(cpu_file.read_text())
    return float(measured["cpu_s"]), int(measured["requests"])


def paired_runs(sandbox: SandboxProcess, classes: tuple[str, str], users: int, seconds: int,
                workdir: Path, *, concurrent: bool) -> dict[str, tuple[float, int]]:
    """Both classes of a pair measured: one after the other in the given order, or (with
    ``concurrent``) at the same time as two processes on the same sandbox, so that any
    load from outside falls on both measured windows alike."""
    if concurrent:
        started = {name: start_run(sandbox, name, users, seconds, workdir) for name in classes}
        return {name: finish_run(name, *started[name], seconds) for name in classes}
    return {name: finish_run(name, *start_run(sandbox, name, users, seconds, workdir), seconds)
            for name in classes}


def overhead(users: int, seconds: int, rounds: int, workdir: Path, *,
             concurrent: bool = False) -> list[str]:
    """One line per pair: the median paired-round CPU/request ratio, each round, and pooled."""
    lines = []
    with SandboxProcess(token_ttl=3600) as sandbox:
        totals: dict[str, list[float]] = {name: [0.0, 0] for pair in PAIRS for name in pair}
        per_round: dict[str, list[float]] = {ours: [] for ours, _ in PAIRS}
        for number in range(rounds):
            for ours, bare in PAIRS:
                measured = {}
                order = (bare, ours) if number % 2 == 0 else (ours, bare)
                runs = paired_runs(sandbox, order, users, seconds, workdir,
                                   concurrent=concurrent)
                for user_class, (cpu, requests) in runs.items():
                    totals[user_class][0] += cpu
                    totals[user_class][1] += requests
                    measured[user_class] = cpu / max(requests, 1)
                per_round[ours].append(measured[ours] / measured[bare])
        for ours, bare in PAIRS:
            per_ours = totals[ours][0] / max(totals[ours][1], 1)
            per_bare = totals[bare][0] / max(totals[bare][1], 1)
            base = "FastHttpUser" if "Fast" in bare else "HttpUser"
            spread = ", ".join(f"{r:.2f}" for r in per_round[ours])
            # The median of the paired rounds: each round runs both classes back to back,
            # so a burst of outside load spoils one round, not the verdict.
            median = statistics.median(per_round[ours])
            verdict = "PASS" if median <= TARGET_RATIO else "FAIL"
            how = "concurrent" if concurrent else "paired"
            lines.append(f"{ours}: {median:.2f}x bare {base} CPU/request, median of "
                         f"{len(per_round[ours])} {how} rounds (target <= {TARGET_RATIO}x: "
                         f"{verdict}; rounds {spread}; pooled {per_ours / per_bare:.2f}x, "
                         f"{per_ours * 1e6:.0f} vs {per_bare * 1e6:.0f} us)")
    return lines


def token_calls(workdir: Path) -> str:
    used_for = TOKEN_TTL - refresh_margin(TOKEN_TTL)
    seconds = round(TOKEN_LIFETIMES * used_for)
    with SandboxProcess(token_ttl=TOKEN_TTL) as sandbox:
        before = sandbox.admin().stats()["tokens_issued"]
        command = locust_command(Path(__file__).parents[1] / "locustfiles" / "token_refresh.py",
                                 ["TokenRefreshUser"], host=sandbox.base_url, users=TOKEN_USERS,
                                 spawn_rate=TOKEN_USERS, run_time=f"{seconds}s",
                                 extra=["--wait-time", "0.5-1.5", "--loglevel", "WARNING"])
        subprocess.run(command, env=child_env(sandbox.env()), cwd=workdir, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=seconds + 90)
        calls = sandbox.admin().stats()["tokens_issued"] - before
    verdict = "PASS" if calls <= TOKEN_TARGET else "FAIL"
    return (f"TokenRefreshUser: {calls} token calls for {TOKEN_USERS} users across "
            f"{TOKEN_LIFETIMES} token lifetimes (target <= {TOKEN_TARGET}: {verdict}; a per-user "
            f"login would make {TOKEN_USERS * TOKEN_LIFETIMES:,}; {TOKEN_TTL} s tokens used "
            f"{used_for:g} s each, {seconds} s run)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=at_least(1), default=10)
    parser.add_argument("--seconds", type=at_least(2), default=6, help="per run (default 6)")
    parser.add_argument("--rounds", type=at_least(1), default=5,
                        help="runs of each class (default 5)")
    parser.add_argument("--concurrent", action="store_true",
                        help="run the two classes of a pair at the same time (a machine "
                             "loaded by other work: both windows see the same load)")
    parser.add_argument("--skip-tokens", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="authzkit-bench-") as tmp:
        workdir = Path(tmp)
        for line in overhead(args.users, args.seconds, args.rounds, workdir,
                             concurrent=args.concurrent):
            print(line, flush=True)
        if not args.skip_tokens:
            print(token_calls(workdir), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
