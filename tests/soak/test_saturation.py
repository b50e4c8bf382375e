"""The sandbox at saturation for 8 s from a Locust subprocess: no 5xx, memory bounded.

Locust users with zero think time (plain authorize and full challenge round trips, through
both of Locust's HTTP clients) keep a sandbox PROCESS as busy as two cores allow, while the
sandbox's resident memory is sampled from ``/proc``. Every request must end as expected (an
expected challenge counts as a success, so any 5xx would be a failure), and memory must level
off: the second half of the run may not keep growing. The numbers are printed (``-s``) for
the closing note of the hardening issue.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from authzkit.loadtest.child import locust_command
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

REPO = Path(__file__).resolve().parents[2]
DURATION_S = 8  # thousands of requests a half: a leak shows between the two halves
USERS = 40

pytestmark = pytest.mark.slow


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_saturation_without_5xx_or_growing_memory(tmp_path: Path) -> None:
    with SandboxProcess(key_size=2048) as sandbox:
        assert sandbox.process is not None
        pid = sandbox.process.pid
        samples: list[tuple[float, float]] = []
        stop = threading.Event()

        def sample() -> None:
            started = time.monotonic()
            while not stop.is_set():
                samples.append((time.monotonic() - started, rss_mb(pid)))
                stop.wait(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        command = locust_command(
            REPO / "locustfiles" / "authorize.py",
            ["FastAuthorizeUser", "FastChallengeUser", "AuthorizeUser", "ChallengeUser"],
            host=sandbox.base_url,
            users=USERS,
            spawn_rate=USERS,
            run_time=f"{DURATION_S}s",
            out=tmp_path,
        )
        try:
            done = subprocess.run(
                command,
                env=child_env(sandbox.env()),
                cwd=tmp_path,
                capture_output=True,
                timeout=DURATION_S + 90,
                check=False,
            )
        finally:
            stop.set()
            sampler.join(timeout=5)
        stats = sandbox.admin().stats()

    rows = json.loads((tmp_path / "stats.json").read_text())
    requests = sum(r["num_requests"] for r in rows)
    failures = sum(r["num_failures"] for r in rows)
    elapsed = max(t for t, _ in samples)
    peak = max(m for _, m in samples)
    halfway = max(m for t, m in samples if t <= elapsed / 2)
    print(
        f"\nsaturation: {requests} requests in {DURATION_S} s "
        f"({requests / DURATION_S:.0f}/s), {failures} failures; sandbox outcomes "
        f"{stats['authorize']}; peak RSS {peak:.1f} MiB (first half {halfway:.1f} MiB)"
    )
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, output[-3000:]
    assert requests >= USERS, "some users never sent a request"  # whatever the speed
    assert failures == 0, output[-3000:]
    assert not [t for t in stats["authorize"] if t.startswith("5")], stats
    assert peak < 512, f"peak RSS {peak:.1f} MiB"
    assert peak <= halfway * 1.25 + 8, (
        f"memory kept growing: {halfway:.1f} MiB at half time, {peak:.1f} MiB peak"
    )
