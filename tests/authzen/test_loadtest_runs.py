"""``authzkit loadtest`` and ``authzkit capacity`` on the AuthZEN dialect, end to end, in a
child process as a user runs them: on the AuthZEN sandbox each starts (its certification
world: user ``n`` asks the world's (subject, action, resource) combinations from ``n``
times the batch on), and against Cerbos, a PDP nobody here wrote.

Counts, never times: the decisions follow from the world's rules (with ``--batch 4
--semantic deny_on_first_deny`` user 0's batch ends at its fourth evaluation, user 1's at
its first, each at one deny), the capacity search's target serves one call at a time
for 100 ms (10 calls/s): 8/s holds, 16/s breaks on any machine, and the latency per
decision is only compared with itself and the calls' (ordered, a batch's below its call's).
A sandbox requiring a Bearer token gets it from the token method configured (a scripted
token endpoint), in every process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from authzkit import Sandbox
from authzkit.wire.children import child_env

from support.cerbos import CerbosPdp
from support.fake_pdp import FakePdp

pytestmark = pytest.mark.slow

WAIT_S = 120.0  # a deadline for the child, never an assertion on time
# One todo case Cerbos decides (the todo interop corpus's evaluation-03: authorized).
CERBOS_CASE = {
    "AUTHZKIT_DIALECT": "authzen",
    "AUTHZKIT_SUBJECT_ID": "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    "AUTHZKIT_SUBJECT_TYPE": "user",
    "AUTHZKIT_RESOURCE_ID": "todo-1",
    "AUTHZKIT_RESOURCE_TYPE": "todo",
    "AUTHZKIT_PLAIN_ACTION": "can_read_todos",
}


def authzkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


def loadtest(out: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a short load test into ``out`` (exit 0 asserted); its summary.json."""
    done = authzkit("loadtest", "--out", str(out), "-t", "2s", "--no-report", *args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "decisions: " in done.stdout, done.stdout
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def calls(summary: dict[str, Any], row: str) -> int:
    return int(summary["latency_us"][row]["count"])


def per_decision(summary: dict[str, Any]) -> dict[str, int]:
    """The decisions' latency percentiles, checked present, counted and ordered."""
    found: dict[str, int] = summary["decisions"]["latency_us_per_decision"]
    assert found["count"] == summary["decisions"]["count"]
    assert 0 < found["p50"] <= found["p90"] <= found["p99"] <= found["p99.9"] <= found["max"]
    return found


def test_closed_loop_counts_calls_and_decisions(tmp_path: Path) -> None:
    summary = loadtest(tmp_path / "run", "--dialect", "authzen", "-u", "2")
    decisions, sent = summary["decisions"], calls(summary, "POST evaluation")
    assert sent > 0 and summary["failures_total"] == 0
    assert decisions["calls"] == decisions["count"] == sent == summary["requests"]
    # users 0 and 1 ask alice read record-1 and record-2: both authorized
    assert (decisions["authorized"], decisions["denied"]) == (sent, 0)
    # one decision per call: its latency is the whole call's (timed around the call's row)
    assert per_decision(summary)["p50"] >= 0.99 * summary["latency_us"]["POST evaluation"]["p50"]
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (meta["dialect"], meta["evaluations"]) == ("authzen", {"batch": None, "semantic": None})


def test_open_model_sends_its_evaluations_at_the_rate(tmp_path: Path) -> None:
    summary = loadtest(tmp_path / "run", "--dialect", "authzen", "--rate", "40")
    sent = calls(summary, "POST evaluation")
    assert summary["schedule"]["sent"] == sent == summary["decisions"]["count"] > 0
    assert summary["failures_total"] == 0


def test_a_batch_ends_at_its_first_deny(tmp_path: Path) -> None:
    summary = loadtest(
        tmp_path / "run",
        *("--dialect", "authzen", "-u", "2", "--batch", "4", "--semantic", "deny_on_first_deny"),
    )
    decisions, sent = summary["decisions"], calls(summary, "POST evaluations")
    assert sent > 0 and summary["failures_total"] == 0
    # user 0: authorized x3 then denied; user 1: denied first (execute_all would answer 4 each)
    assert decisions["denied"] == decisions["calls"] == sent
    assert decisions["authorized"] % 3 == 0
    assert decisions["count"] == decisions["authorized"] + decisions["denied"] < 4 * sent
    # a call's latency divided among its decisions: 4 of 5 decisions are a quarter of a call
    call_p50 = summary["latency_us"]["POST evaluations"]["p50"]
    assert call_p50 / 8 <= per_decision(summary)["p50"] <= call_p50 / 2


def test_capacity_search_finds_the_known_capacity(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit(
        *("capacity", "--dialect", "authzen", "--out", str(out), "--no-report"),
        *("--concurrency", "1", "--service-time-us", "100000", "--max-p99-ms", "400"),
        *("--start-rate", "8", "--step-time", "1.5", "--warm-up", "0.3", "--precision", "1"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "capacity: 8/s (SLO p99 <= 400 ms, failure ratio <= 0.01)" in done.stdout
    document = json.loads((out / "capacity.json").read_text())
    steps = [(s["offered_per_s"], s["verdict"]) for s in document["steps"]]
    assert steps == [(8, "held"), (16, "broke")]
    assert (document["search"]["dialect"], document["search"]["batch"]) == ("authzen", None)


def test_a_load_test_against_cerbos_runs_clean(tmp_path: Path, cerbos: CerbosPdp) -> None:
    env = {**CERBOS_CASE, "AUTHZKIT_BASE_URL": cerbos.base_url}
    summary = loadtest(tmp_path / "run", "-u", "2", env=env)
    decisions, sent = summary["decisions"], calls(summary, "POST evaluation")
    assert sent > 0 and summary["failures_total"] == 0
    assert (decisions["authorized"], decisions["denied"]) == (sent, 0)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["preflight"]["ran"] and meta["preflight"]["decisions"] == ["authorized"]


def test_a_capacity_search_against_cerbos_runs_clean(tmp_path: Path, cerbos: CerbosPdp) -> None:
    out = tmp_path / "run"
    done = authzkit(
        *("capacity", "--out", str(out), "--no-report", "--batch", "2"),
        *("--max-p99-ms", "1000", "--start-rate", "10", "--max-rate", "20"),
        *("--step-time", "1.5", "--warm-up", "0.3", "--precision", "1"),
        env={**CERBOS_CASE, "AUTHZKIT_BASE_URL": cerbos.base_url},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((out / "capacity.json").read_text())
    assert [s["verdict"] for s in document["steps"]] == ["held", "held"]
    assert all(s["failures"] == 0 and s["requests"] > 0 for s in document["steps"])


TOKEN_PATH = "/api/v3.1/oauth/tokens"  # the draft's token endpoint, on the scripted issuer
PDP_TOKEN = "loadtest-pdp-token-0123456789"


@pytest.fixture
def bearer_sandbox() -> Iterator[tuple[Sandbox, FakePdp]]:
    """An AuthZEN sandbox requiring ``PDP_TOKEN``, and a token endpoint issuing it."""
    issuer = FakePdp().start()
    issuer.routes[TOKEN_PATH] = lambda _: (
        200,
        {"accessToken": PDP_TOKEN, "expiresIn": 900, "tokenType": "Bearer"},
    )
    try:
        with Sandbox(dialect="authzen", bearer_token=PDP_TOKEN) as sandbox:
            yield sandbox, issuer
    finally:
        issuer.stop()


def test_a_token_method_sends_its_bearer_token_from_every_process(
    tmp_path: Path, bearer_sandbox: tuple[Sandbox, FakePdp]
) -> None:
    sandbox, issuer = bearer_sandbox
    env = {
        "AUTHZKIT_BASE_URL": sandbox.base_url,
        "AUTHZKIT_DIALECT": "authzen",
        "AUTHZKIT_AUTH_URL": issuer.base_url,
        "AUTHZKIT_CLIENT_ID": "pep",
        "AUTHZKIT_CLIENT_SECRET": "pep-secret-0123456789",
    }
    out = tmp_path / "run"
    done = authzkit(
        *("loadtest", "--out", str(out), "-t", "2s", "--no-report"),
        *("--processes", "2", "--rate", "30", "--batch", "2"),
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    decisions, sent = summary["decisions"], calls(summary, "POST evaluations")
    # every call answered: none met the sandbox's 401
    assert sent > 0 and summary["failures_total"] == 0 and decisions["calls"] == sent
    # one token per process (the counters are real), and one for the command's preflight
    provider = summary["token_provider"]
    assert (provider["token_calls"], provider["processes"], provider["rejected_401"]) == (2, 2, 0)
    assert len(issuer.posted(TOKEN_PATH)) == 3
    assert per_decision(summary)["count"] == decisions["count"] >= sent  # both processes' merged
    assert PDP_TOKEN not in done.stdout + done.stderr
    for path in out.rglob("*"):
        assert not path.is_file() or PDP_TOKEN.encode() not in path.read_bytes(), path
