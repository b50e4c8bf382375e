"""``--reset-stats`` (Locust's, after ``--``) on an AuthZEN load test: the decisions the
summary counts start again with the requests when spawning completes, so both say the
same calls (before, the decisions kept the ramp-up's and outnumbered the requests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.wire.children import child_env

pytestmark = pytest.mark.slow


def test_reset_stats_resets_the_decisions_with_the_requests(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "authzkit", "loadtest", "--dialect", "authzen"),
            *("--out", str(out), "-t", "3s", "--no-report", "-u", "2", "-r", "1"),
            *("--", "--reset-stats"),
        ],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    sent = summary["latency_us"]["POST evaluation"]["count"]
    decisions = summary["decisions"]
    assert 0 < sent == summary["requests"]
    assert decisions["calls"] == decisions["count"] == sent
    assert decisions["latency_us_per_decision"]["count"] == sent
