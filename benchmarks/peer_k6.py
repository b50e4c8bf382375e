"""authzkit's open model and k6, side by side: CPU per request, and how punctually each
delivers its arrivals, judged at the server (docs/loadtest.md, "authzkit and k6, measured
side by side", says how).

    python benchmarks/peer_k6.py [--rates 200,1000,2000] [--warm-up 3] [--seconds 10]
        [--rounds 3] [--stall-seconds 15] [--skip-stall] [--short] [--max]

Prints the table, the ratios (authzkit / k6, each the median of the paired rounds' ratios)
and the stall lines; judges nothing: exit 1 only when a run breaks. ``--short`` (one round
of a few seconds a run) is what ``.ci/run`` runs.
``--max`` runs only each generator's on-schedule maximum (``peer_ladder.py``); a ladder
takes minutes, so ``--short`` alone leaves it out (``--max --short`` shortens its rungs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from arguments import at_least
from peer_grid import Lateness, Punctuality, lateness, punctuality
from peer_k6_tool import authorize_request, find_k6, k6_script, k6_summary
from peer_ladder import MAX_SANDBOX, RUNGS, ladder_ends, max_line, maximum, on_schedule
from peer_processes import (
    RecordingSandbox,
    cores,
    kill_child,
    pinned_to,
    served_count,
    tree_cpu_seconds,
)
from peer_wire import WireCapture, monotonic_offset, why_not_captured

from authzkit.wire.children import child_env
from authzkit.wire.spec import AUTHORIZE_PATH

GENERATORS = ("k6", "authzkit")
SANDBOX = ["--service-time-us", "1000", "--key-size", "2048", "--token-ttl", "3600"]
STALL = ["--pause-every", "5", "--pause-ms", "500"]
STALL_RATE = 200
TAIL_S = 1  # the schedule runs on this long after the window ends
GENERATOR_END_WAIT_S = 10  # a run broken off: how long its generator may take to end
CPU_TARGET_RATES = (1000, 2000)
ROUNDS = 3  # paired rounds: a generator's CPU moves by ~10 % from run to run, k6's more


@dataclass(frozen=True)
class Run:
    """One generator's run: its window at the server and what it reported."""

    generator: str
    rate: int
    window_s: float
    cpu_s: float
    arrived: int
    grid: Punctuality  # the arrivals as the sandbox's handler stamped them
    service_p99_ms: float  # the sandbox's own, arrival to response, every request
    reported: dict[str, Any]
    sandbox_cpu_s: float = 0.0  # the sandbox's, in the same window
    wire: Punctuality | None = None  # as the kernel handed them to its socket (peer_wire)
    # authzkit's: each judged arrival against its own intended start (or why not read)
    late: Lateness | str | None = None

    @property
    def cpu_per_request_us(self) -> float:
        return self.cpu_s / self.arrived * 1e6

    @property
    def judged(self) -> Punctuality:
        """The arrivals every verdict reads: at the server's socket when captured."""
        return self.wire if self.wire is not None else self.grid


def rates(text: str) -> list[int]:
    """``--rates``: whole requests per second, comma-separated."""
    try:
        found = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be whole numbers like 200,1000, got {text!r}"
        ) from None
    if not found or min(found) < 1:
        raise argparse.ArgumentTypeError(f"every rate must be at least 1, got {text!r}")
    return found


def _authzkit_env(base_url: str) -> dict[str, str]:
    env = {k: v for k, v in child_env().items() if not k.startswith("AUTHZKIT_")}
    return env | {"AUTHZKIT_BASE_URL": base_url}


def _start(
    generator: str, k6: str, rate: int, seconds: int, base_url: str, folder: Path, core: int | None
) -> subprocess.Popen[bytes]:
    """The generator's process, pinned (its children inherit the core)."""
    if generator == "k6":
        script = folder / "authorize.js"
        script.write_text(
            k6_script(authorize_request(base_url), rate, seconds, folder / "k6-summary.json")
        )
        command = [k6, "run", "--quiet", "--no-usage-report", str(script)]
        env = os.environ | {"K6_NO_USAGE_REPORT": "true"}
    else:
        command = [
            sys.executable,
            "-m",
            "authzkit",
            "loadtest",
            "--rate",
            str(rate),
            "-t",
            f"{seconds}s",
            "--no-report",
            "--quiet",
            "--no-preflight",
            "--out",
            str(folder / "run"),
        ]
        env = _authzkit_env(base_url)
    with (folder / f"{generator}.log").open("wb") as log:
        return subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=pinned_to(core),
        )


def _first_arrival(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    """Wait until the sandbox has answered the generator's first authorize request."""
    session = requests.Session()
    deadline = time.monotonic() + 120
    while served_count(session, base_url) == 0:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            tail = log.read_text(errors="replace").strip()[-600:]
            raise RuntimeError(f"{log.stem} sent no authorize request: {tail}")
        time.sleep(0.02)


def _reported(generator: str, folder: Path) -> dict[str, Any]:
    """What the generator itself reported: dropped calls, failures, its p99 (ms)."""
    if generator == "k6":
        summary = k6_summary(json.loads((folder / "k6-summary.json").read_text()))
        return {
            "dropped": summary.dropped,
            "failed": summary.failed,
            "p99_ms": summary.p99_ms,
            "vus_max": summary.vus_max,
        }
    summary = json.loads((folder / "run" / "summary.json").read_text())
    schedule = summary["schedule"]
    return {
        "dropped": schedule["intended"] - schedule["sent"],
        "failed": summary["failures_total"],
        "p99_ms": summary["latency_us"]["POST authorize"]["p99"] / 1000,
        "late": schedule["late"],
        "lag_p50_us": schedule["lag_p50_us"],
        "lag_p99_us": schedule["lag_p99_us"],
        "sent": schedule["sent"],
        "began_at": schedule["began_at"],
    }


def run_one(
    generator: str,
    k6: str,
    rate: int,
    *,
    warm_up: int,
    seconds: int,
    folder: Path,
    stall: bool = False,
    sandbox_options: list[str] = SANDBOX,
    wire: bool = True,
) -> Run:
    """One run on a fresh sandbox: the window's CPU and arrivals (as the sandbox stamped
    them, and with ``wire`` as its socket received them, where tcpdump may capture), the
    generator's report."""
    folder.mkdir(parents=True)
    sandbox_core, generator_core = cores()
    options = sandbox_options + (STALL if stall else [])
    sandbox = RecordingSandbox.start(folder / "sandbox", options, sandbox_core)
    capture: WireCapture | str = "not asked for"
    try:
        if wire:  # on the sandbox's core: it stamps the kernel's time, whatever its delay
            port = int(urlsplit(sandbox.base_url).port or 0)
            capture = WireCapture.start(folder, port, AUTHORIZE_PATH, pinned_to(sandbox_core))
            if isinstance(capture, str):  # it could a moment ago: no verdict of mixed judges
                raise RuntimeError(capture)
        process = _start(
            generator,
            k6,
            rate,
            warm_up + seconds + TAIL_S,
            sandbox.base_url,
            folder,
            generator_core,
        )
        try:
            _first_arrival(process, sandbox.base_url, folder / f"{generator}.log")
            time.sleep(warm_up)
            start, cpu_start = time.monotonic_ns(), tree_cpu_seconds(process.pid)
            served_start = tree_cpu_seconds(sandbox.process.pid)
            time.sleep(seconds)
            end, cpu_end = time.monotonic_ns(), tree_cpu_seconds(process.pid)
            served_end = tree_cpu_seconds(sandbox.process.pid)
            code = process.wait(seconds + 120)
        finally:
            if process.poll() is None:  # broken off (Ctrl-C reached it too): let it end
                try:
                    process.wait(GENERATOR_END_WAIT_S)  # its results, then its folder goes
                except subprocess.TimeoutExpired:
                    kill_child(process)
        if code != 0:
            tail = (folder / f"{generator}.log").read_text(errors="replace").strip()[-600:]
            raise RuntimeError(f"{generator} at {rate}/s exited {code}: {tail}")
        captured = capture.stop() if isinstance(capture, WireCapture) else None
    finally:
        try:
            recorded = sandbox.stop()
        finally:
            sandbox.kill()
            if isinstance(capture, WireCapture):
                capture.kill()
    arrived = np.asarray(recorded["arrived_ns"], dtype=np.int64)
    answered = np.asarray(recorded["answered_ns"], dtype=np.int64)
    in_window = int(((arrived >= start) & (arrived < end)).sum())
    if in_window < 2:
        raise RuntimeError(f"{generator} at {rate}/s: {in_window} arrivals in the window")
    reported = _reported(generator, folder)
    late = None
    if generator == "authzkit":  # its schedule said when it began: lateness, no fitting
        origin = round(reported["began_at"] * 1e9) - monotonic_offset()
        judged = captured if captured is not None else arrived.tolist()
        late = lateness(judged, origin, rate, start, end, reported["sent"])
    return Run(
        generator,
        rate,
        (end - start) / 1e9,
        cpu_end - cpu_start,
        in_window,
        punctuality(arrived.tolist(), rate, start, end),
        float(np.percentile(answered - arrived, 99)) / 1e6,
        reported,
        served_end - served_start,
        None if captured is None else punctuality(captured, rate, start, end),
        late,
    )


Rounds = dict[tuple[str, int], list[Run]]  # (generator, rate): its runs, one a round
Figure = Callable[[Run], float]


def _us(value: float) -> str:
    return f"{value:,.0f}"


def median(runs: list[Run], figure: Figure) -> float:
    """One generator's figure over its rounds."""
    return float(statistics.median(figure(run) for run in runs))


def paired(runs: Rounds, rate: int, figure: Figure) -> str:
    """authzkit / k6 of ``figure`` at ``rate``: the median of each round's ratio (the two
    of a round ran back to back, so what the machine did then falls on both)."""
    pairs = zip(runs["authzkit", rate], runs["k6", rate], strict=True)
    found = [figure(ours) / figure(theirs) for ours, theirs in pairs if figure(theirs)]
    return f"{statistics.median(found):.2f}x" if found else "n/a"


def _cpu(run: Run) -> float:
    return run.cpu_per_request_us


def _p50(run: Run) -> float:
    return run.judged.deviation_p50_us


def _p99(run: Run) -> float:
    return run.judged.deviation_p99_us


def table(runs: Rounds, chosen: list[int]) -> list[str]:
    """The issue's table: per rate, k6 / authzkit (each the median of its rounds; the
    CPU ratio the median of the rounds' ratios)."""
    lines = [
        "| rate | CPU per request, k6 / authzkit | arrival deviation p50, k6 / authzkit "
        "| p99, k6 / authzkit |",
        "|---|---|---|---|",
    ]
    for rate in chosen:
        k6, ours = runs["k6", rate], runs["authzkit", rate]
        lines.append(
            f"| {rate:,}/s | {_us(median(k6, _cpu))} / {_us(median(ours, _cpu))} µs "
            f"({paired(runs, rate, _cpu)}) "
            f"| {_us(median(k6, _p50))} / {_us(median(ours, _p50))} µs "
            f"| {_us(median(k6, _p99))} / {_us(median(ours, _p99))} µs |"
        )
    return lines


def ratios(runs: Rounds, chosen: list[int]) -> list[str]:
    """authzkit / k6 for each figure and rate (the median of the rounds' ratios), then
    authzkit's own lag beside the server's."""

    def each(figure: Figure) -> str:
        return ", ".join(f"{rate:,}/s {paired(runs, rate, figure)}" for rate in chosen)

    cpu_rates = ", ".join(f"{r:,}" for r in CPU_TARGET_RATES)
    lines = [
        f"authzkit / k6, CPU per request: {each(_cpu)} (target <= 1.00x at {cpu_rates}/s)",
        f"authzkit / k6, arrival deviation p50: {each(_p50)}; "
        f"p99: {each(_p99)} (target <= 1.00x at every rate)",
    ]
    if all(run.wire is not None for rounds in runs.values() for run in rounds):
        lines.append(
            f"  as the sandbox's handler stamped them: p50 "
            f"{each(lambda r: r.grid.deviation_p50_us)}; "
            f"p99 {each(lambda r: r.grid.deviation_p99_us)}"
        )
    for rate in chosen:
        lines.append(lag_line(runs["authzkit", rate]))
    return lines


def lag_line(runs: list[Run]) -> str:
    """authzkit's own schedule lag beside what the server saw of the same starts: how long
    after its intended start each request arrived (no fitted grid: the same origin). Each
    the median of the rounds."""
    lates = [run.late for run in runs if isinstance(run.late, Lateness)]
    why = [run.late for run in runs if isinstance(run.late, str)]
    seen = (
        f"p50 {_us(statistics.median(late.p50_us for late in lates))} / p99 "
        f"{_us(statistics.median(late.p99_us for late in lates))} µs"
        if lates
        else f"not read ({why[0] if why else 'no run'})"
    )
    return (
        f"authzkit at {runs[0].rate:,}/s, its own schedule lag p50 "
        f"{_us(median(runs, lambda r: r.reported['lag_p50_us']))} / p99 "
        f"{_us(median(runs, lambda r: r.reported['lag_p99_us']))} µs beside each arrival's "
        f"lateness for its intended start at the server, {seen} (target: p50 within 100 µs)"
    )


def detail(run: Run, round_number: int | None = None) -> str:
    """One run's figures behind the table, for reading a change (of which round)."""
    reported = run.reported
    extra = (
        f"VUs {reported['vus_max']}"
        if run.generator == "k6"
        else f"late starts {reported['late']:,}"
    )
    return (
        f"  {'' if round_number is None else f'round {round_number}, '}"
        f"{run.generator} at {run.rate:,}/s: {run.arrived:,} arrivals in {run.window_s:.1f} s "
        f"({run.arrived / run.window_s:,.0f}/s), {run.judged.skipped} slots without one; CPU "
        f"{run.cpu_s:.2f} s; reported p99 {reported['p99_ms']:.2f} ms, failed "
        f"{reported['failed']:,}, dropped {reported['dropped']:,}, {extra}"
    )


def stall_line(run: Run) -> str:
    reported = run.reported
    gap = reported["p99_ms"] / run.service_p99_ms - 1 if run.service_p99_ms else 0.0
    return (
        f"  {run.generator}: dropped {reported['dropped']:,} calls ({run.judged.skipped} slots "
        f"without an arrival at the server), arrival lateness p99 "
        f"{run.judged.lateness_p99_us / 1000:,.1f} ms, reported p99 {reported['p99_ms']:.1f} ms"
        f" vs the sandbox's own {run.service_p99_ms:.1f} ms ({gap:+.1%})"
    )


def rung_line(generator: str, rate: int, run: Run | None, broke: str = "") -> str:
    """One rung of the ladder: what the server saw, both cores' load, the verdict."""
    if run is None:
        return f"  {generator} at {rate:,}/s: broke ({broke[:160]}) -> OFF"
    grid = run.judged
    verdict = "on schedule" if on_schedule(grid) else "OFF"
    return (
        f"  {generator} at {rate:,}/s: {grid.arrivals:,} arrivals for {grid.slots:,} slots "
        f"({grid.slots - grid.arrivals:,} missing), arrival lateness p99 "
        f"{grid.lateness_p99_us / 1000:.2f} ms; generator core {run.cpu_s / run.window_s:.0%}, "
        f"sandbox core {run.sandbox_cpu_s / run.window_s:.0%} busy -> {verdict}"
    )


def ladder(generator: str, k6: str, *, warm_up: int, seconds: int, folder: Path, wire: bool) -> int:
    """Up the rungs until two in a row miss; each rung printed; the highest on schedule."""
    verdicts: list[tuple[int, bool]] = []
    for rate in RUNGS:
        try:
            run: Run | None = run_one(
                generator,
                k6,
                rate,
                warm_up=warm_up,
                seconds=seconds,
                folder=folder / f"{generator}-max-{rate}",
                sandbox_options=MAX_SANDBOX,
                wire=wire,
            )
            broke = ""
        except (RuntimeError, subprocess.TimeoutExpired) as exc:  # overloaded: a miss
            run, broke = None, str(exc).replace("\n", " ")
        print(rung_line(generator, rate, run, broke), flush=True)
        verdicts.append((rate, run is not None and on_schedule(run.judged)))
        if ladder_ends([kept for _, kept in verdicts]):
            break
    return maximum(verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rates",
        type=rates,
        default=[200, 1000, 2000],
        help="requests/s, comma-separated (default 200,1000,2000)",
    )
    parser.add_argument(
        "--warm-up",
        type=at_least(1),
        default=3,
        help="seconds after the first arrival before the window (default 3)",
    )
    parser.add_argument(
        "--seconds",
        type=at_least(1),
        default=10,
        help="the measured window of each run (default 10)",
    )
    parser.add_argument(
        "--rounds",
        type=at_least(1),
        default=ROUNDS,
        help=f"paired rounds at every rate, which generator goes first alternating; the "
        f"ratios are the median of the rounds' (default {ROUNDS})",
    )
    parser.add_argument(
        "--stall-seconds", type=at_least(5), default=15, help="the stall run's window (default 15)"
    )
    parser.add_argument("--skip-stall", action="store_true", help="no stall run")
    parser.add_argument(
        "--short",
        action="store_true",
        help="a quick setting: one round, 1 s warm-up, 3 s windows, a 6 s stall window",
    )
    parser.add_argument(
        "--max",
        action="store_true",
        help="only each generator's on-schedule maximum: a ladder of rates (minutes)",
    )
    args = parser.parse_args()
    if args.short:
        args.warm_up, args.seconds, args.stall_seconds, args.rounds = 1, 3, 6, 1
    k6, how = find_k6()
    if k6 is None:
        print(f"peer_k6: skipped: {how}", flush=True)
        return 0
    sandbox_core, generator_core = cores()
    where = (
        "unpinned (one core)"
        if sandbox_core is None
        else f"sandbox on core {sandbox_core}, generator on core {generator_core}"
    )
    with tempfile.TemporaryDirectory(prefix="authzkit-peer-k6-") as tmp:
        missing = why_not_captured(Path(tmp))
    wire = missing is None
    where += (
        "; arrivals as the server's socket received them (tcpdump on lo)"
        if wire
        else f"; arrivals as the sandbox's handler stamped them ({missing})"
    )
    if args.max:
        return _maxima(k6, how, where, args.warm_up, args.seconds, wire)
    print(
        f"{how}; {where}; sandbox --service-time-us 1000; {args.warm_up} s warm-up, "
        f"{args.seconds} s window per run, {args.rounds} paired round(s); machine load "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="authzkit-peer-k6-") as tmp:
            runs: Rounds = {}
            for number in range(args.rounds):
                for rate in args.rates:
                    for generator in GENERATORS[:: 1 if number % 2 == 0 else -1]:
                        run = run_one(
                            generator,
                            k6,
                            rate,
                            warm_up=args.warm_up,
                            seconds=args.seconds,
                            folder=Path(tmp) / f"{generator}-{rate}-{number}",
                            wire=wire,
                        )
                        runs.setdefault((generator, rate), []).append(run)
                        print(detail(run, number + 1 if args.rounds > 1 else None), flush=True)
            for line in [*table(runs, args.rates), *ratios(runs, args.rates)]:
                print(line, flush=True)
            if not args.skip_stall:
                print(
                    f"stall (sandbox {' '.join(STALL)}) at {STALL_RATE}/s, "
                    f"{args.stall_seconds} s window:",
                    flush=True,
                )
                for generator in GENERATORS:
                    run = run_one(
                        generator,
                        k6,
                        STALL_RATE,
                        warm_up=args.warm_up,
                        seconds=args.stall_seconds,
                        stall=True,
                        folder=Path(tmp) / f"{generator}-stall",
                        wire=wire,
                    )
                    print(stall_line(run), flush=True)
    except (
        RuntimeError,
        OSError,
        ValueError,
        KeyError,
        subprocess.TimeoutExpired,
        requests.RequestException,
    ) as exc:
        print(f"peer_k6: error: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


def _maxima(k6: str, how: str, where: str, warm_up: int, seconds: int, wire: bool) -> int:
    print(
        f"{how}; {where}; on-schedule maximum: sandbox {' '.join(MAX_SANDBOX[:2])} and no "
        f"--concurrency limit (its core's load is printed: the generator must be the "
        f"bottleneck); {warm_up} s warm-up, {seconds} s window per rung; machine load "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="authzkit-peer-k6-") as tmp:
            found = {
                generator: ladder(
                    generator, k6, warm_up=warm_up, seconds=seconds, folder=Path(tmp), wire=wire
                )
                for generator in GENERATORS
            }
    except (OSError, ValueError, KeyError, requests.RequestException) as exc:
        print(f"peer_k6: error: {exc}", file=sys.stderr, flush=True)
        return 1
    print(max_line(found["k6"], found["authzkit"]), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C: its children got it too, and their folder is gone
        print("peer_k6: interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
