"""An AuthZEN load run's plan and calls, in-process: what the plan holds and hands Locust,
what a user sends (one evaluation, or a batch with its semantic) and how its answers are
counted (a deny is a decision, not a failure; an answer that is no decision is a failure)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from authzkit.client.transport import HttpResponse
from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.loadtest.plan import locust_options, plan_run
from authzkit.loadtest.record.evaluations import (
    COUNTS,
    AuthzenState,
    EvaluationTasks,
    decision_summary,
)

REQUESTS = tuple(
    {"subject": {"type": "user", "id": s}, "action": {"name": "read"}, "resource": r}
    for s in ("alice", "bob")
    for r in ({"type": "doc", "id": "1"}, {"type": "doc", "id": "2"})
)


@pytest.fixture(autouse=True)
def counts() -> Iterator[None]:
    """This process's decision counters, fresh for each test and left inactive after."""
    COUNTS.__init__(active=True)  # type: ignore[misc]
    yield
    COUNTS.__init__()  # type: ignore[misc]


def plan(*argv: str) -> Any:
    parser = argparse.ArgumentParser()
    add_loadtest_arguments(parser)
    return plan_run(parser.parse_args(list(argv)), environ={})


def test_the_plan_holds_the_batch_and_hands_it_to_locust() -> None:
    found = plan("--dialect", "authzen", "--batch", "4", "--semantic", "deny_on_first_deny")
    assert (found.dialect, found.evaluations.batch) == ("authzen", 4)
    assert found.evaluations.semantic == "deny_on_first_deny"
    extra = locust_options(found, None)
    at = extra.index("--dialect")
    assert extra[at : at + 6] == [
        *("--dialect", "authzen", "--batch", "4", "--semantic", "deny_on_first_deny")
    ]
    single = plan("--dialect", "authzen")
    assert single.evaluations.batch is None and "--batch" not in locust_options(single, None)
    assert plan().evaluations is None and "--dialect" not in locust_options(plan(), None)


class FakeTransport:
    """Answers each call with ``answer`` and keeps what was sent."""

    def __init__(self, answer: Mapping[str, Any], status: int = 200) -> None:
        self.answer, self.status = answer, status
        self.sent: list[Any] = []

    def request(self, *args: Any, **kwargs: Any) -> HttpResponse:  # a Transport, for transport_for
        raise AssertionError("prepared calls use send")

    def send(self, method: str, url: str, name: str, headers: Any, data: bytes) -> HttpResponse:
        self.sent.append((url, name, json.loads(data), headers["X-Request-ID"]))
        echo = {"X-Request-ID": headers["X-Request-ID"]}
        return HttpResponse(self.status, echo, json.dumps(self.answer).encode(), 1.0)


def state(batch: int | None) -> AuthzenState:
    return AuthzenState(
        base_url="http://pdp",
        evaluation_url="http://pdp/access/v1/evaluation",
        evaluations_url="http://pdp/access/v1/evaluations",
        requests=REQUESTS,
        batch=batch,
        semantic="permit_on_first_permit",
        timeout=5.0,
        wait=(0.0, 0.0),
    )


def run(found: AuthzenState, answer: Mapping[str, Any], times: int) -> list[Any]:
    rows: list[dict[str, Any]] = []
    transport = FakeTransport(answer)
    tasks = EvaluationTasks(found, session=transport, number=1, fire=lambda **r: rows.append(r))
    for _ in range(times):
        tasks.authorize_once()
    return [transport.sent, rows]


def test_a_user_sends_its_evaluation_and_counts_a_deny_as_a_decision() -> None:
    sent, rows = run(state(None), {"decision": False}, 3)
    assert [s[:3] for s in sent] == [
        ("http://pdp/access/v1/evaluation", "evaluation", REQUESTS[1])
    ] * 3
    assert len({s[3] for s in sent}) == 3  # a request id per call
    assert rows == []  # no failure row
    assert decision_summary([COUNTS.as_counters()]) == {
        **decision_summary([COUNTS.as_counters()]),  # type: ignore[dict-item]
        "count": 3,
        "authorized": 0,
        "denied": 3,
        "calls": 3,
        "undecided_calls": 0,
        "per_call": 1.0,
    }


def test_a_batch_sends_its_semantic_and_counts_every_answer() -> None:
    answer = {"evaluations": [{"decision": False}, {"decision": True}]}
    sent, rows = run(state(3), answer, 2)
    url, name, body, _ = sent[0]
    assert (url, name) == ("http://pdp/access/v1/evaluations", "evaluations")
    assert body["options"] == {"evaluations_semantic": "permit_on_first_permit"}
    assert body["evaluations"] == [REQUESTS[3], REQUESTS[0], REQUESTS[1]]  # user 1: from 3 on
    found = decision_summary([COUNTS.as_counters()])
    assert found is not None and rows == []
    assert (found["count"], found["authorized"], found["denied"]) == (4, 2, 2)


def test_an_answer_that_is_no_decision_is_a_failure_row() -> None:
    _, rows = run(state(None), {"allowed": True}, 1)
    assert [(r["request_type"], r["name"]) for r in rows] == [("OUTCOME", "unexpected")]
    assert "no boolean decision" in str(rows[0]["exception"])
    found = decision_summary([COUNTS.as_counters()])
    assert found is not None and (found["count"], found["undecided_calls"]) == (0, 1)
    assert decision_summary([{"token_calls": 0, "refreshes": 0}]) is None  # a draft run's
