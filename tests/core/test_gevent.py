"""Single-flight under gevent monkey-patching, in a subprocess (patching is process-wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.subjects import Subject

pytest.importorskip("gevent")

PROBE = Path(__file__).resolve().parents[1] / "support" / "gevent_probe.py"
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("order", ["patch-first", "build-first"])
def test_greenlets_crossing_expiry_cause_one_token_call_each_time(
    sandbox: Any, alice: Subject, order: str
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "ignore",
            str(PROBE),
            sandbox.base_url,
            sandbox.client_id,
            sandbox.client_secret,
            alice.token,
            alice.resource_id,
            order,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    counters = json.loads(done.stdout.strip().splitlines()[-1])
    assert counters["patched"] is True
    assert counters["lock_module"].startswith("gevent"), counters
    assert counters["authorized"] == 200
    assert (counters["token_calls"], counters["refreshes"]) == (2, 1)
    assert sandbox.stats()["tokens_issued"] == 2
