"""The resources of the processes a run started, in-process (issue 35, item 2): the
generator's memory verdict on given series, the fault marks from two snapshots of the
sandbox's counters, and one :class:`Watch` sampling this very process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from authzkit.loadtest.resources import (
    GROWTH_MIN_BYTES,
    SERIES,
    Watch,
    fault_marks,
    generator_verdict,
    steady_growth,
    write_resources,
)
from authzkit.wire.children import stop_process

MIB = 1024 * 1024


def process(role: str, rss: list[int]) -> dict[str, Any]:
    return {
        "role": role,
        "pid": 1,
        "seconds": [float(s) for s in range(len(rss))],
        "rss_bytes": rss,
    }


def test_a_generator_whose_memory_grows_steadily_is_flagged_and_a_flat_one_is_not() -> None:
    leaking = [200 * MIB + s * MIB // 2 for s in range(120)]  # +30 MiB a minute, 200 MiB
    flat = [200 * MIB + (s * 7919) % (4 * MIB) for s in range(120)]  # noise, no trend
    grows = steady_growth(process("locust", leaking)["seconds"], leaking)
    assert grows["judged"] and grows["steady"] and grows["r2"] > 0.99
    assert abs(grows["rss_growth_bytes_per_min"] - 30 * MIB) < MIB
    assert not steady_growth(process("locust", flat)["seconds"], flat)["steady"]
    verdict = generator_verdict(
        [process("master", flat), process("worker 1", leaking), process("sandbox", leaking)]
    )
    assert verdict["steady_growth"] and verdict["growing"] == ["worker 1"]
    assert set(verdict["processes"]) == {"master", "worker 1"}  # the sandbox is no generator


def test_small_growth_or_a_short_run_is_not_a_leak() -> None:
    small = [100 * MIB + s * 1024 for s in range(120)]  # steady but 120 KiB in all
    assert not steady_growth(process("locust", small)["seconds"], small)["steady"]
    start_up = [50 * MIB + s * 4 * MIB for s in range(30)]  # a 30 s run importing locust
    short = steady_growth(process("locust", start_up)["seconds"], start_up)
    assert not short["judged"] and not short["steady"]
    assert GROWTH_MIN_BYTES >= 16 * MIB


def test_a_fault_is_marked_in_the_second_its_counter_rose() -> None:
    before = {"faults": {"key_rotations": 1, "pauses": 2, "unavailable:authorize": 5}}
    after = {
        "faults": {"key_rotations": 2, "pauses": 2, "unavailable:authorize": 9, "token_outage": 3}
    }
    marks = fault_marks(before, after, 1_800_000_000.25)
    assert marks == [
        {"at": 1_800_000_000.25, "fault": "key rotation", "count": 1},
        {"at": 1_800_000_000.25, "fault": "token outage", "count": 3},
    ]
    assert fault_marks({}, {}, 0.0) == []


def test_a_watch_samples_each_process_once_a_tick_and_joins_the_summary(tmp_path: Path) -> None:
    counters = iter(
        [{"faults": {"pauses": 0}}, {"faults": {"pauses": 1}}, {"faults": {"pauses": 1}}]
    )
    ticks = iter([100.0, 101.0, 102.0, 103.0])
    # A process of its own, with no children: the watch counts a watched process's
    # children as its --processes workers, and a pytest worker may have some (sandboxes).
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        watch = Watch(idle.pid, stats=lambda: next(counters), clock=lambda: next(ticks))
        for _ in range(3):
            watch.tick()
    finally:
        stop_process(idle)
    [mine] = watch.section()["processes"]
    assert mine["role"] == "locust" and mine["pid"] == idle.pid
    assert mine["seconds"] == [1.0, 2.0, 3.0]
    for name in SERIES:
        assert len(mine[name]) == 3
    assert mine["rss_bytes"][0] > 1 * MIB and mine["threads"][0] >= 1 and mine["fds"][0] >= 3
    assert watch.marks == [{"at": 102.0, "fault": "pause", "count": 1}]
    (tmp_path / "summary.json").write_text(json.dumps({"requests": 3}))
    write_resources(tmp_path, watch)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["requests"] == 3 and summary["fault_marks"] == watch.marks
    assert summary["resources"]["processes"][0]["rss_bytes"] == mine["rss_bytes"]
    assert summary["resources"]["generator"]["steady_growth"] is False
