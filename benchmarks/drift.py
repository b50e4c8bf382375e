"""The drift verdict on a degrading and on a steady sandbox: the ratio it measures, the slope
it fits, and how long the verdict needed to trip.

    python benchmarks/drift.py [--seconds 150] [--rate 50] [--latency-ms 10]
        [--degrade-ms-per-min 10] [--max-drift 1.5] [--window 10] [--warm-up 10]

Two ``authzkit loadtest --rate R`` runs of ``--seconds`` each, one after the other, against
the sandbox the command starts: both answer every authorize in ``--latency-ms``; the first
also ``--degrade-ms-per-min X`` slower for each minute since it started. The truth: the
degrading sandbox's latency, every percentile of it, climbs by X ms a minute (the p50 of
the last window minus the first's, per minute between them, should read about X ms/min; the
p99, about the slowest of each second's calls, also carries the machine's noise), the steady
one's not at all (ratio about 1.00, the verdict passing). The time to trip is the end of
the first window (consecutive windows of ``--window`` s after ``--warm-up``, each its
seconds' histograms merged) whose p99 exceeds ``--max-drift`` times the first window's:
when a run of that length would have failed.

The machine is shared: other work shows as latency spikes in either run, which can move the
steady run's ratio away from 1.00. Prints lines; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from authzkit.wire.children import child_env


def run(args: argparse.Namespace, out: Path, degrade: float) -> tuple[dict[str, Any], float]:
    """One run; its summary's drift and its wall time."""
    command = [
        sys.executable,
        "-m",
        "authzkit",
        "loadtest",
        "--rate",
        f"{args.rate:g}",
        "-t",
        f"{args.seconds}s",
        "--latency-ms",
        f"{args.latency_ms:g}",
        "--max-drift",
        f"{args.max_drift:g}",
        "--drift-window",
        str(args.window),
        "--warm-up",
        str(args.warm_up),
        "--no-report",
        "--quiet",
        "--out",
        str(out),
    ]
    if degrade:
        command += ["--degrade-ms-per-min", f"{degrade:g}"]
    started = time.monotonic()
    subprocess.run(command, env=child_env(), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))["drift"], wall


def time_to_trip(drift: dict[str, Any], max_drift: float) -> int | None:
    """The end (s) of the first window whose p99 exceeds ``max_drift`` times the first's: a
    run ending there would have failed (the final verdict judges the run's last window)."""
    first = drift["first"]["p99"]
    for window in drift["windows"][1:]:
        if window["p99"] and first and window["p99"] > max_drift * first:
            return int(window["to_s"])
    return None


def line(name: str, drift: dict[str, Any], args: argparse.Namespace, wall: float) -> str:
    if not drift.get("judged"):
        return f"{name}: not judged ({drift.get('reason')})"
    first, last, slope = drift["first"], drift["last"], drift["slope"] or {}
    tripped = time_to_trip(drift, args.max_drift)
    trip = "never" if tripped is None else f"at s {tripped}"
    minutes = (last["from_s"] + last["to_s"] - first["from_s"] - first["to_s"]) / 120
    p50_slope = (last["p50"] - first["p50"]) / 1000 / minutes if minutes else 0.0
    return (
        f"{name}: p50 {first['p50'] / 1000:.1f} -> {last['p50'] / 1000:.1f} ms "
        f"({p50_slope:+.2f} ms/min between the windows); "
        f"drift ratio {drift['ratio']:.2f} (p99 {first['p99'] / 1000:.1f} ms in "
        f"s {first['from_s']}-{first['to_s']}, {last['p99'] / 1000:.1f} ms in "
        f"s {last['from_s']}-{last['to_s']}); p99 slope "
        f"{slope.get('p99_us_per_min', 0) / 1000:+.2f} ms/min (r2 {slope.get('r2', 0):.2f}); "
        f"verdict at --max-drift {args.max_drift:g}: {'passed' if drift['passed'] else 'failed'}"
        f"; first window over the limit: {trip}; {drift['seconds']} s measured, {wall:.0f} s wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=150)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--degrade-ms-per-min", type=float, default=10.0)
    parser.add_argument("--max-drift", type=float, default=1.5)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--warm-up", type=int, default=10)
    args = parser.parse_args()
    print(
        f"{args.seconds} s at {args.rate:g}/s, sandbox answering in {args.latency_ms:g} ms; "
        f"windows of {args.window} s after a {args.warm_up} s warm-up"
    )
    with tempfile.TemporaryDirectory(prefix="authzkit-drift-") as folder:
        for name, degrade in (
            (f"degrading (+{args.degrade_ms_per_min:g} ms/min)", args.degrade_ms_per_min),
            ("steady", 0.0),
        ):
            out = Path(folder) / name.split()[0]
            drift, wall = run(args, out, degrade)
            print(line(name, drift, args, wall), flush=True)


if __name__ == "__main__":
    main()
