"""The locustfiles against a faulty sandbox PROCESS: the run ends by itself, requests keep
flowing, and the 503s are counted as failures named by their error type.

Locust runs as a subprocess (never imported here: its gevent monkey-patching would leak
into the whole pytest run); results are read from what it writes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.loadtest.child import locust_command
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

from support.faults import UNAVAILABLE

pytestmark = pytest.mark.slow

AUTHORIZE_FILE = Path(__file__).resolve().parents[2] / "locustfiles" / "authorize.py"
FAILURE = f"HTTP 503 {UNAVAILABLE}"


@pytest.fixture(scope="module")
def faulty_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """``authzkit sandbox --error-rate 0.2 --latency-ms 5`` as a child process."""
    log = tmp_path_factory.mktemp("faulty-sandbox") / "sandbox.log"
    with SandboxProcess(
        log=log, options=["--error-rate", "0.2", "--latency-ms", "5", "--fault-seed", "20"]
    ) as sandbox:
        yield sandbox


def test_locust_keeps_running_and_counts_503s_by_type(
    faulty_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    base_url = faulty_sandbox.base_url
    command = locust_command(
        AUTHORIZE_FILE,
        ["AuthorizeUser", "ChallengeUser"],
        host=base_url,
        users=4,
        spawn_rate=4,
        run_time="4s",
        extra=[
            "--json-file",
            str(tmp_path / "stats"),
            "--summary-file",
            str(tmp_path / "summary.json"),
            "--exit-code-on-error",
            "0",
        ],
    )
    env = child_env(faulty_sandbox.env())
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, timeout=60, check=False
    )
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, output[-3000:]  # it stopped by itself at --run-time
    assert "Traceback" not in output

    rows = {(e["method"], e["name"]): e for e in json.loads((tmp_path / "stats.json").read_text())}
    authorize = rows[("POST", "authorize")]
    assert authorize["num_requests"] >= 40, rows.keys()  # requests kept flowing
    assert 0 < authorize["num_failures"] < authorize["num_requests"] * 0.5
    assert rows[("FLOW", "challenge round trip")]["num_requests"] >= 5

    summary = json.loads((tmp_path / "summary.json").read_text())
    by_name: dict[str, int] = {}
    for failure in summary["failures"]:
        assert FAILURE in failure["error"], failure  # every failure is a deliberate 503
        by_name[failure["name"]] = by_name.get(failure["name"], 0) + failure["occurrences"]
    assert by_name["authorize"] == authorize["num_failures"]
    assert summary["failures_total"] == sum(r["num_failures"] for r in rows.values())

    secret = faulty_sandbox.client_secret.reveal()
    assert secret not in output and secret not in json.dumps(summary)
    assert faulty_sandbox.process is not None
    assert faulty_sandbox.process.poll() is None  # the sandbox survived the run
    assert faulty_sandbox.log_path is not None
    assert "faults:        latency 5 ms, 503 rate 0.2 (seed 20)" in (
        faulty_sandbox.log_path.read_text()
    )
