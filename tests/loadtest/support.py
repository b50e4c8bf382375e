"""Helpers of the load tests: run ``locust`` as a subprocess and read what it wrote.

Nothing here imports locust (its gevent monkey-patching would leak into the whole pytest
run); results are read from what Locust writes: ``--json-file`` (exact final numbers) and
our ``--summary-file``, plus the sandbox's own counters.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authzkit.loadtest.runner import locust_command
from authzkit.sandbox.process import child_env

REPO = Path(__file__).resolve().parents[2]
AUTHORIZE_FILE = REPO / "locustfiles" / "authorize.py"
TOKEN_FILE = REPO / "locustfiles" / "token_refresh.py"
TOKEN_TTL = 4


@dataclass
class LocustRun:
    """What one locust subprocess left behind."""

    code: int
    output: str
    rows: dict[tuple[str, str], dict[str, Any]]
    summary: dict[str, Any]

    def row(self, kind: str, name: str) -> dict[str, Any]:
        assert (kind, name) in self.rows, f"no row {kind} {name}; rows: {sorted(self.rows)}"
        return self.rows[(kind, name)]

    @property
    def failures(self) -> int:
        return sum(r["num_failures"] for r in self.rows.values())

    def assert_clean(self) -> None:
        failures = self.summary.get("failures")
        assert self.code == 0, f"exit {self.code}, failures {failures}\n{self.output[-3000:]}"
        assert self.failures == 0, failures


def read_results(out: Path, code: int, output: str) -> LocustRun:
    stats_file = out / "stats.json"
    entries = json.loads(stats_file.read_text()) if stats_file.exists() else []
    summary_file = out / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    return LocustRun(code=code, output=output,
                     rows={(e["method"], e["name"]): e for e in entries}, summary=summary)


def locust(locustfile: Path, classes: list[str], *, host: str, out: Path, users: int = 4,
           run_time: str = "3s", extra: list[str] | None = None,
           env: dict[str, str] | None = None, timeout: float = 90) -> LocustRun:
    """Run one headless locust to completion (it stops by itself) and read its results."""
    out.mkdir(parents=True, exist_ok=True)
    command = locust_command(locustfile, classes, host=host, users=users, spawn_rate=users,
                             run_time=run_time, extra=[
                                 "--json-file", str(out / "stats"),
                                 "--summary-file", str(out / "summary.json"),
                                 *(extra or [])])
    done = subprocess.run(command, env=child_env(env), cwd=out, capture_output=True,
                          timeout=timeout, check=False)
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    return read_results(out, done.returncode, output)
