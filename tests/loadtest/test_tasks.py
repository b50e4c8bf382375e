"""The users' flows in-process (no locust): against the session's embedded sandbox, with a
plain requests session and a recording stand-in for Locust's request event."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from authzkit.errors import ConfigError
from authzkit.loadtest.context import Shared, build_shared
from authzkit.loadtest.tasks import FLOW_ROW, JWE_ROW, UNEXPECTED_ROW, UserTasks
from authzkit.loadtest.verdict import run_summary
from authzkit.sandbox import Sandbox


def options(**overrides: Any) -> SimpleNamespace:
    values = {"auth_url": "", "client_id": "", "client_secret": "", "subjects": "",
              "action": "show_account_balance_public", "challenge_action": "transfer_funds",
              "wait_time": "0"}
    return SimpleNamespace(**{**values, **overrides})


class Rows:
    """Records what the flows fire, as Locust's request event would receive it."""

    def __init__(self) -> None:
        self.fired: list[dict[str, Any]] = []

    def __call__(self, **event: Any) -> None:
        self.fired.append(event)

    def named(self, row: tuple[str, str]) -> list[dict[str, Any]]:
        return [e for e in self.fired if (e["request_type"], e["name"]) == row]


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    for name in ("AUTHZKIT_BASE_URL", "AUTHZKIT_AUTH_URL", "AUTHZKIT_CLIENT_ID",
                 "AUTHZKIT_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)


def flows_for(state: Shared, rows: Rows, number: int = 0) -> UserTasks:
    return UserTasks(state, session=requests.Session(), number=number, fire=rows)


def test_shared_state_from_a_sandbox_world(sandbox: Sandbox, no_env: None) -> None:
    state = build_shared(options(wait_time="0.5-2"), sandbox.base_url)
    assert state.sandbox and state.wait == (0.5, 2.0)
    assert state.token_provider.client_id == sandbox.client_id
    assert {s.label for s in state.subjects} == {"alice", "bob"}
    assert state.subjects[0].token.reveal() not in repr(state.subjects[0])


def test_plain_and_challenge_flows_share_one_provider(sandbox: Sandbox, no_env: None) -> None:
    state = build_shared(options(), sandbox.base_url)
    rows = Rows()
    users = [flows_for(state, rows, n) for n in range(3)]
    for user in users:
        user.authorize_once()
        user.challenge_round_trip()
    assert rows.named(UNEXPECTED_ROW) == []
    flows = rows.named(FLOW_ROW)
    assert len(flows) == 3 and all(e["exception"] is None for e in flows)
    assert len(rows.named(JWE_ROW)) == 3
    assert state.token_provider.token_calls == 1 and state.keys.fetches == 1
    assert {u.subject.label for u in users} == {"alice", "bob"}  # round robin over subjects


def test_rotated_keys_cost_one_refetch_not_a_failure(sandbox: Sandbox, no_env: None) -> None:
    state = build_shared(options(), sandbox.base_url)
    rows = Rows()
    user = flows_for(state, rows)
    user.challenge_round_trip()
    sandbox.rotate_keys()
    user.challenge_round_trip()
    assert [e["exception"] for e in rows.named(FLOW_ROW)] == [None, None]
    assert state.keys.fetches == 2


def test_unexpected_outcomes_fail_with_the_service_type(sandbox: Sandbox, no_env: None) -> None:
    state = build_shared(options(action="transfer_funds",
                                 challenge_action="show_account_balance_public"),
                         sandbox.base_url)
    rows = Rows()
    user = flows_for(state, rows)
    user.authorize_once()
    user.challenge_round_trip()
    assert "srn:error:challenge_required" in str(rows.named(UNEXPECTED_ROW)[0]["exception"])
    assert "expected srn:error:challenge_required" in str(rows.named(FLOW_ROW)[0]["exception"])


def test_a_wrong_answer_fails_the_flow_with_its_type(sandbox: Sandbox, no_env: None,
                                                     tmp_path: Path) -> None:
    resource = next(r for r in sandbox.world.to_json()["resources"] if r["owner"] == "alice")
    subjects = tmp_path / "subjects.csv"
    subjects.write_text("subject_token,resource_id,pin\n"
                        f"{sandbox.session_token('alice')},{resource['id']},0000\n")
    state = build_shared(options(subjects=str(subjects), client_id=sandbox.client_id,
                                 client_secret=sandbox.client_secret), sandbox.base_url)
    assert not state.sandbox  # subjects and credentials given: the world is never read
    rows = Rows()
    flows_for(state, rows).challenge_round_trip()
    assert str(rows.named(FLOW_ROW)[0]["exception"]) == (
        "HTTP 403 srn:error:bad_challenge_solution")


def test_no_url_is_a_clear_error(no_env: None) -> None:
    with pytest.raises(ConfigError, match="pass --host or set AUTHZKIT_BASE_URL"):
        build_shared(options(), None)


def test_run_summary_sums_processes_and_counts_401s() -> None:
    errors = [{"type": "POST", "name": "authorize", "occurrences": 3,
               "error": "CatchResponseError('HTTP 401 srn:error:invalid_token')"}]
    summary = run_summary(requests=100, failures=3, p95_ms=12, errors=errors,
                          counters=[{"token_calls": 2, "refreshes": 1},
                                    {"token_calls": 3, "refreshes": 2}],
                          max_p95_ms=None, max_failure_ratio=0.01)
    assert summary["token_provider"] == {"token_calls": 5, "refreshes": 3, "processes": 2,
                                         "rejected_401": 3}
    assert summary["thresholds"]["checked"] and not summary["thresholds"]["passed"]
