"""``authzkit capacity`` against services of known capacity: the capacity found, as a ratio of
the truth, and the search's wall time.

    python benchmarks/capacity_truth.py [--settings 1x10:50,4x10:50,2x20:100]
        [--step-time 5] [--warm-up 1] [--start-rate 20] [--processes N]

Each setting ``NxL:SLO`` is a sandbox (started by the command, as a user runs it) answering
authorize in exactly ``L`` ms (``--service-time-us``) with at most ``N`` requests in service
at once, the rest waiting in line (``--concurrency N``): it can answer at most
``N * 1000 / L`` requests per second, and no more whatever the offered rate. Below that
rate, with constant arrivals, no request waits (every call takes ``L``); above it the line
grows without end, so a step's p99 passes any SLO above ``L`` within seconds. The truth is
``N * 1000 / L``, and the search, judged on the p99 ``SLO`` ms, should find a capacity
between 0.9x and 1.0x of it (the bisection stops within ``--precision`` 5 % below the
first rate that broke), never above 1.03x (a rate a little over the truth breaks only once
its line is long enough: the step's length decides how little over).

The machine is shared: CPU taken by other work shows as schedule lag and as service time
beyond ``L``, which can make a step break below the truth; a step whose generator fell
behind is told apart (``limited_by: generator``). Prints lines; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from authzkit.wire.children import child_env

GOAL = (0.9, 1.0)
NEVER_ABOVE = 1.03


def _setting(text: str) -> tuple[int, float, float]:
    """``4x10:50`` → (4 in service, 10 ms each, p99 SLO 50 ms)."""
    shape, slo = text.split(":")
    concurrency, service_ms = shape.split("x")
    return int(concurrency), float(service_ms), float(slo)


def search(
    concurrency: int, service_ms: float, slo_ms: float, args: argparse.Namespace, out: Path
) -> tuple[dict[str, object], float, str]:
    """One ``authzkit capacity`` run; its capacity.json, wall time and last lines."""
    command = [
        sys.executable,
        "-m",
        "authzkit",
        "capacity",
        "--concurrency",
        str(concurrency),
        "--service-time-us",
        str(int(service_ms * 1000)),
        "--max-p99-ms",
        f"{slo_ms:g}",
        "--start-rate",
        f"{args.start_rate:g}",
        "--step-time",
        f"{args.step_time:g}",
        "--warm-up",
        f"{args.warm_up:g}",
        "--out",
        str(out),
        "--quiet",
    ]
    if args.processes:
        command += ["--processes", str(args.processes)]
    started = time.monotonic()
    done = subprocess.run(
        command, env=child_env(), capture_output=True, text=True, timeout=1800, check=False
    )
    wall = time.monotonic() - started
    try:
        document = json.loads((out / "capacity.json").read_text())
    except FileNotFoundError:
        document = {}
    return document, wall, (done.stdout + done.stderr).strip()


def line(setting: str, truth: float, document: dict[str, object], wall: float) -> str:
    found = document.get("capacity_per_s")
    steps = len(document.get("steps", []))  # type: ignore[arg-type]
    if not isinstance(found, int | float):
        return f"{setting:>10}  truth {truth:7.1f}/s  found none ({document.get('why')})"
    ratio = found / truth
    verdict = (
        "within goal"
        if GOAL[0] <= ratio <= GOAL[1]
        else ("ABOVE 1.03x" if ratio > NEVER_ABOVE else "outside 0.9-1.0x")
    )
    return (
        f"{setting:>10}  truth {truth:7.1f}/s  found {found:7.1f}/s  ratio {ratio:.3f}x  "
        f"({verdict}; limited by {document.get('limited_by')}, knee "
        f"{document.get('knee_per_s')}/s, {steps} steps, wall {wall:.0f} s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="1x10:50,4x10:50,2x20:100")
    parser.add_argument("--step-time", type=float, default=5.0)
    parser.add_argument("--warm-up", type=float, default=1.0)
    parser.add_argument("--start-rate", type=float, default=20.0)
    parser.add_argument("--processes", type=int, default=None)
    args = parser.parse_args()
    print(
        f"authzkit capacity against --concurrency N --service-time-us L (truth N*1000/L), "
        f"{args.step_time:g} s steps ({args.warm_up:g} s warm-up) from {args.start_rate:g}/s; "
        f"goal {GOAL[0]}-{GOAL[1]}x, never above {NEVER_ABOVE}x",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="capacity-truth-") as folder:
        for number, text in enumerate(args.settings.split(",")):
            concurrency, service_ms, slo_ms = _setting(text)
            truth = concurrency * 1000.0 / service_ms
            out = Path(folder) / f"run-{number}"
            document, wall, said = search(concurrency, service_ms, slo_ms, args, out)
            setting = f"N={concurrency} L={service_ms:g}ms p99<={slo_ms:g}ms"
            print(line(setting, truth, document, wall), flush=True)
            if not document:
                print(f"    {said}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
