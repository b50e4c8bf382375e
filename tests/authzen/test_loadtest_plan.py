"""An AuthZEN load run's plan and calls, in-process: what the plan holds and hands Locust,
what a user sends (one evaluation, or a batch with its semantic; a Bearer token when a token
method is configured) and how its answers are counted (a deny is a decision, not a failure;
an answer that is no decision is a failure), and the latency per decision as summary.json
and the report say it, the processes' histograms merged."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from authzkit.client.transport import HttpResponse
from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.loadtest.plan import locust_options, plan_run
from authzkit.loadtest.read.decisions import decision_figures, decisions_line
from authzkit.loadtest.read.run import RunResults
from authzkit.loadtest.record.context import configured_token_provider
from authzkit.loadtest.record.evaluations import (
    COUNTS,
    AuthzenState,
    EvaluationCounts,
    EvaluationTasks,
    decision_summary,
)
from authzkit.wire.config import Settings

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


def state(batch: int | None, provider: Any = None) -> AuthzenState:
    return AuthzenState(
        base_url="http://pdp",
        evaluation_url="http://pdp/access/v1/evaluation",
        evaluations_url="http://pdp/access/v1/evaluations",
        requests=REQUESTS,
        batch=batch,
        semantic="permit_on_first_permit",
        timeout=5.0,
        wait=(0.0, 0.0),
        token_provider=provider,
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


class TokenPdp(FakeTransport):
    """A token endpoint issuing ``tok-1``, ``tok-2``, … and a PDP accepting ``tok-2`` on."""

    def __init__(self) -> None:
        super().__init__({"decision": True})
        self.issued = 0
        self.bearers: list[str | None] = []

    def request(self, method: str, url: str, **kwargs: Any) -> HttpResponse:
        assert url == "http://idp/api/v3.1/oauth/tokens" and kwargs["name"] == "token"
        self.issued += 1
        answer = {"accessToken": f"tok-{self.issued}", "expiresIn": 900, "tokenType": "Bearer"}
        return HttpResponse(200, {}, json.dumps(answer).encode(), 1.0)

    def send(self, method: str, url: str, name: str, headers: Any, data: bytes) -> HttpResponse:
        given = headers.get("Authorization")
        self.bearers.append(given)
        self.status = 401 if given in (None, "Bearer tok-1") else 200
        return super().send(method, url, name, headers, data)


def settings(**more: str) -> Settings:
    return Settings.from_env({"AUTHZKIT_BASE_URL": "http://pdp", **more}, dotenv=None)


def test_a_configured_token_method_sends_a_bearer_token_and_renews_it_on_a_401() -> None:
    credentials = {"AUTHZKIT_CLIENT_ID": "pep", "AUTHZKIT_CLIENT_SECRET": "pep-secret-0123456789"}
    provider = configured_token_provider(
        None, settings(AUTHZKIT_AUTH_URL="http://idp", **credentials), "http://pdp"
    )
    assert provider is not None
    pdp, rows = TokenPdp(), []
    tasks = EvaluationTasks(
        state(None, provider), session=pdp, number=0, fire=lambda **r: rows.append(r)
    )
    tasks.prepare(challenge=False)  # the token before the schedule: no call waits for it
    for _ in range(2):
        tasks.authorize_once()
    # tok-1 refused once: one new token, one resend; then tok-2 as long as it lasts
    assert pdp.bearers == ["Bearer tok-1", "Bearer tok-2", "Bearer tok-2"]
    assert (provider.token_calls, provider.refreshes) == (2, 1)
    found = decision_summary([COUNTS.as_counters()])
    assert found is not None and (found["calls"], found["undecided_calls"]) == (2, 0)
    assert rows == [] and "tok-" not in repr(tasks.state)


def test_no_token_method_sends_no_authorization_header() -> None:
    assert configured_token_provider(None, settings(), "http://pdp") is None
    pdp = TokenPdp()
    tasks = EvaluationTasks(state(None), session=pdp, number=0, fire=lambda **r: None)
    tasks.prepare(challenge=False)
    tasks.authorize_once()
    assert (pdp.bearers, pdp.issued) == ([None], 0)


def test_the_latency_per_decision_is_merged_over_the_processes_never_averaged() -> None:
    one, two, master = EvaluationCounts(active=True), EvaluationCounts(active=True), COUNTS
    one.record(authorized=4, decided=4, elapsed_us=1000)  # a batch of 4: 250 µs each
    two.record(authorized=1, decided=1, elapsed_us=900)
    two.record(authorized=0, decided=2, elapsed_us=3000)  # 1,500 µs each
    for worker in (one, two):  # each report's delta, then nothing new
        master.add_encoded(worker.drain())
        master.add_encoded(worker.drain())
    found = decision_summary([one.as_counters(), two.as_counters()], master.per_decision)
    assert found is not None
    assert (found["count"], found["calls"], found["authorized"], found["denied"]) == (7, 3, 5, 2)
    assert found["mean_us_per_decision"] == 700.0  # (1000 + 900 + 3000) / 7
    # 250 (4 times), 900, 1500 (twice): the p50 is one's, not the mean of both p50s (875 µs)
    assert found["latency_us_per_decision"] == {
        "count": 7,
        "p50": 250,
        "p90": 1500,
        "p99": 1500,
        "p99.9": 1500,
        "max": 1500,
    }
    assert decision_summary([{"authorized": 0}])["latency_us_per_decision"]["count"] == 0  # type: ignore[index]


def results(decisions: dict[str, Any]) -> RunResults:
    rows = pd.DataFrame([{"type": "POST", "name": "evaluations", "requests": 3, "rps": 1.5}])
    empty = pd.DataFrame()
    return RunResults(Path("run"), rows, empty, empty, empty, summary={"decisions": decisions})


def test_the_report_shows_the_latency_per_decision_and_reads_older_runs() -> None:
    old = {"count": 7, "authorized": 5, "denied": 2, "calls": 3, "per_call": 2.33}
    old["mean_us_per_decision"] = 700.0
    spread = {"count": 7, "p50": 250, "p90": 1500, "p99": 1500, "p99.9": 1500, "max": 1500}
    figures = dict(decision_figures(results({**old, "latency_us_per_decision": spread})))
    assert figures["decisions/s"] == "3.5"
    assert figures["latency per decision (mean)"] == "700 µs"
    assert figures["latency per decision"] == "p50 250 µs · p90 1.50 ms · p99 1.50 ms · max 1.50 ms"
    line = decisions_line(results({**old, "latency_us_per_decision": spread}))
    assert line is not None and line.endswith(
        "latency per decision p50 250 µs · p90 1.50 ms · p99 1.50 ms · max 1.50 ms"
    )
    before = dict(decision_figures(results(old)))  # a run recorded before the percentiles
    assert (
        "latency per decision" not in before and before["latency per decision (mean)"] == "700 µs"
    )
