"""Helpers of the load tests: run ``locust`` as a subprocess and read what it wrote.

Nothing here imports locust (its gevent monkey-patching would leak into the whole pytest
run); results are read from what Locust writes: ``--json-file`` (exact final numbers) and
our ``--summary-file``, plus the sandbox's own counters. :func:`token_options` gives the
locust options that point the users at a sandbox's token endpoint explicitly, the way a
tester points them at a real one.
"""

from __future__ import annotations

import csv
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authzkit.loadtest.child import locust_command
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env

REPO = Path(__file__).resolve().parents[2]
AUTHORIZE_FILE = REPO / "locustfiles" / "authorize.py"
TOKEN_FILE = REPO / "locustfiles" / "token_refresh.py"
TOKEN_TTL = 4
# The row of the one OpenID Connect discovery call a published-dialect token provider makes.
DISCOVERY_ROW = ("GET", "openid-configuration")
# What a closed-loop user of the load tests thinks between tasks (see :func:`locust`).
PACED = "0.02-0.05"


@dataclass(frozen=True)
class Service:
    """A sandbox process of one dialect, and the locust options that reach its tokens."""

    dialect: str
    process: SandboxProcess
    options: list[str]


def token_options(process: SandboxProcess, client_auth: str | None = None) -> list[str]:
    """Locust options naming the token endpoint and the client authentication: nothing for
    the draft (its token path is the default), ``--issuer``, ``--client-auth``,
    ``--client-id`` (and ``--client-key-file`` for ``private_key_jwt``) for the published
    dialect. A client secret is never put on a command line: pass it in the environment."""
    if process.issuer is None:
        return []
    method = client_auth or "private_key_jwt"
    options = [
        "--issuer",
        process.issuer,
        "--client-auth",
        method,
        "--client-id",
        process.client_id,
    ]
    if method == "private_key_jwt":
        assert process.client_key_file is not None, "the sandbox wrote no client key file"
        options += ["--client-key-file", str(process.client_key_file)]
    return options


def write_subjects(
    path: Path,
    rows: list[list[str]],
    header: tuple[str, ...] = ("subject_token", "resource_id", "resource_type", "pin"),
) -> Path:
    """A ``--subjects`` CSV of ``rows`` under ``header``."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@dataclass
class LocustRun:
    """What one locust subprocess left behind."""

    code: int
    output: str
    rows: dict[tuple[str, str], dict[str, Any]]
    summary: dict[str, Any]
    timeline: dict[str, Any] = field(default_factory=dict)  # timeline.json, when written

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
    timeline_file = out / "timeline.json"
    timeline = json.loads(timeline_file.read_text()) if timeline_file.exists() else {}
    return LocustRun(
        code=code,
        output=output,
        rows={(e["method"], e["name"]): e for e in entries},
        summary=summary,
        timeline=timeline,
    )


def assert_timeline_counts(run: LocustRun) -> None:
    """timeline.json files every request of every row in exactly one second (so its
    seconds, merged from however many processes, add up to Locust's count), with
    p50 <= p99 <= max in each second, and an ``Aggregated`` row per second summing them."""
    records = run.timeline["records"]
    counted: dict[str, int] = {}
    per_second: dict[int, int] = {}
    for record in records:
        assert record["count"] > 0 and record["p50"] <= record["p99"] <= record["max"], record
        if record["row"] == "Aggregated":
            per_second[record["second"]] = per_second.get(record["second"], 0) + record["count"]
        else:
            counted[record["row"]] = counted.get(record["row"], 0) + record["count"]
            per_second[record["second"]] = per_second.get(record["second"], 0) - record["count"]
    assert counted == {
        f"{kind} {name}": row["num_requests"]
        for (kind, name), row in run.rows.items()
        if row["num_requests"]
    }
    assert set(per_second.values()) == {0}, per_second  # each Aggregated = sum of its rows


def authorize_calls(sandbox: SandboxProcess) -> int:
    """How many authorize calls ``sandbox`` has answered so far, whatever the outcome."""
    return sum(sandbox.admin().stats()["authorize"].values())


def assert_every_call_heard(run: LocustRun, sandbox: SandboxProcess, calls_before: int) -> None:
    """The run's rows hold every authorize call the sandbox answered since ``calls_before``
    (first asks and solutions alike; the users finished their calls within
    ``--stop-timeout``, and a master heard its workers' last reports), and there were some."""
    sent = sum(
        row["num_requests"]
        for (method, name), row in run.rows.items()
        if method == "POST" and name.startswith("authorize")
    )
    assert sent == authorize_calls(sandbox) - calls_before > 0, run.output[-3000:]


def locust(
    locustfile: Path,
    classes: list[str],
    *,
    host: str,
    out: Path,
    users: int = 4,
    run_time: str = "3s",
    extra: list[str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 90,
) -> LocustRun:
    """Run one headless locust to completion (it stops by itself) and read its results.

    Closed-loop users think ``PACED`` seconds between tasks unless the test sets
    ``--wait-time`` itself: the tests assert on counters, never on throughput, and users
    calling flat out would keep the generator and the session's sandbox busy for the whole
    run, which is most of the suite's time on two cores. Open-model users (``--rate``) keep
    their schedule."""
    out.mkdir(parents=True, exist_ok=True)
    extra = list(extra or [])
    if "--wait-time" not in extra and "--rate" not in extra:
        extra += ["--wait-time", PACED]
    command = locust_command(
        locustfile,
        classes,
        host=host,
        users=users,
        spawn_rate=users,
        run_time=run_time,
        extra=[
            "--json-file",
            str(out / "stats"),
            "--summary-file",
            str(out / "summary.json"),
            *extra,
        ],
    )
    done = subprocess.run(
        command, env=child_env(env), cwd=out, capture_output=True, timeout=timeout, check=False
    )
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    return read_results(out, done.returncode, output)
