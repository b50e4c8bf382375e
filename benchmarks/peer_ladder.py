"""The ladder of ``peer_k6.py --max``: rates tried in turn until two in a row miss, a rung on
schedule when, judged at the server, no call was dropped and the arrivals' lateness p99 is
within the schedule-lag limit ``latency_truth.py`` uses. Pure functions (tested in
``tests/test_peer_benchmark.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from latency_truth import LAG_P99_LIMIT_US
from peer_grid import EDGE_SLOTS, Punctuality

# 1,000/s up by steps of 1.5x and 4/3x in turn; the last rung only bounds a run.
RUNGS = (1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000, 16000, 24000, 32000)
# A near-instant service (no 1 ms hold, whose final spin costs the sandbox's core CPU) and
# no --concurrency limit: the sandbox's core stays below full where the generators miss.
MAX_SANDBOX = ["--service-time-us", "1", "--key-size", "2048", "--token-ttl", "3600"]
MISSES_TO_STOP = 2


def on_schedule(grid: Punctuality) -> bool:
    """Every slot of the window got its arrival (a slot at either edge aside) and the
    latest 1 % of arrivals were at most the lag limit late."""
    return grid.slots - grid.arrivals <= EDGE_SLOTS and grid.lateness_p99_us <= LAG_P99_LIMIT_US


def ladder_ends(verdicts: Sequence[bool]) -> bool:
    """Whether to stop climbing: the last two rungs (in order tried) both missed."""
    last = verdicts[-MISSES_TO_STOP:]
    return len(last) == MISSES_TO_STOP and not any(last)


def maximum(rungs: Sequence[tuple[int, bool]]) -> int:
    """The highest rate tried that was on schedule; 0 when none was."""
    return max((rate for rate, kept in rungs if kept), default=0)


def max_line(k6: int, authzkit: int) -> str:
    ratio = f"{authzkit / k6:.2f}x" if k6 else "n/a"
    return (
        f"on-schedule maximum on one core: k6 {k6:,}/s, authzkit {authzkit:,}/s "
        f"(M/N = {ratio}, target >= 1.00x)"
    )


__all__ = ["MAX_SANDBOX", "RUNGS", "ladder_ends", "max_line", "maximum", "on_schedule"]
