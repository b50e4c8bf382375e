"""A capacity search spread over processes: ``--master`` here and a ``--worker`` (on
loopback; on other machines in earnest), against an authzkit sandbox started elsewhere
(``AUTHZKIT_BASE_URL``, so ``--max-rate`` is required). The master announces each step to
its worker in a Locust message, the worker follows it and sends its tally of the step back;
one step at ``--max-rate`` holds (10 calls a second at most, 4 offered), so the search ends
limited by ``max-rate``. The step's calls are the worker's: it reports as one process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env, free_port, stop_process

pytestmark = pytest.mark.slow

WAIT_S = 120.0  # a deadline for the children, never an assertion on time


@pytest.fixture(scope="module")
def known_service() -> Iterator[SandboxProcess]:
    """A sandbox started elsewhere that serves at most 10 calls a second."""
    with SandboxProcess(options=["--concurrency", "1", "--latency-ms", "100"]) as sandbox:
        yield sandbox


def test_a_master_and_its_worker_search_together(
    known_service: SandboxProcess, tmp_path: Path
) -> None:
    port, out = free_port(), tmp_path / "run"
    env = child_env(known_service.env())
    search = ["--max-p99-ms", "400", "--start-rate", "4", "--step-time", "1.5"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "authzkit", "capacity", "--worker", "--master-host",
         "127.0.0.1", "--master-port", str(port), *search],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        master = subprocess.run(
            [sys.executable, "-m", "authzkit", "capacity", "--master", "--expect-workers", "1",
             "--master-port", str(port), "--master-bind-host", "127.0.0.1",
             "--max-rate", "4", "--out", str(out), *search],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S, check=False,
        )  # fmt: skip
        assert worker.wait(timeout=WAIT_S) == 0
    finally:
        stop_process(worker)
    assert master.returncode == 0, master.stdout + master.stderr
    assert "(master of 1 workers" in master.stdout
    assert "capacity: 4/s (SLO p99 <= 400 ms" in master.stdout
    assert "limited by: max-rate: every step held up to --max-rate 4/s" in master.stdout
    document = json.loads((out / "capacity.json").read_text())
    (step,) = document["steps"]
    assert (step["offered_per_s"], step["verdict"], step["processes"]) == (4, "held", 1)
    assert step["requests"] > 0 and step["failures"] == 0
