"""What a load test prints while Locust runs: a progress line every few seconds, read from
the files the child rewrites; and the deadline past which the child is stopped.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from authzkit.loadtest.resources import Watch

PROGRESS_EVERY_S = 2.0
SAMPLE_EVERY_S = 1.0  # the processes' resources (authzkit.loadtest.resources)
GRACE_S = 90.0  # beyond --run-time: start-up, stop timeout, writing the reports


def progress_line(elapsed: float, seconds: float, totals: dict[str, float]) -> str:
    """One progress line: the run's p95 so far (before the first answer ``-``: ``0 µs``
    read as a service answering instantly) and, once known, the p99 of the last
    ``RECENT_S`` whole seconds
    (``last 2s p99 1.2 ms``: a slope shows as it comes)."""
    from authzkit.loadtest.read.units import duration
    from authzkit.loadtest.record.face import RECENT_S

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


__all__ = ["GRACE_S", "PROGRESS_EVERY_S", "SAMPLE_EVERY_S", "progress", "progress_line"]
