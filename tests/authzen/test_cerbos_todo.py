"""The todo interop scenario on Cerbos (its policy pack in tests/interop/cerbos/policies): every
case of the corpus, single and batch, decided as the corpus says; and case by case as the
AuthZEN sandbox's todo world decides it."""

from __future__ import annotations

from typing import Any

from authzkit import Sandbox
from authzkit.check.authzen.corpora import load
from authzkit.check.authzen.probe import AuthzenProbe
from authzkit.check.authzen.runner import run_authzen_checks
from authzkit.client.exchanges import Recorder

from support.cerbos import CerbosPdp


def decisions(base_url: str) -> dict[str, Any]:
    """Case id -> what the PDP at ``base_url`` decided for each todo case."""
    probe = AuthzenProbe(base_url, recorder=Recorder(limit=None))
    found: dict[str, Any] = {}
    try:
        for case in load("todo").entries:
            body = probe.post(case["api"], case["request"]).body()
            found[case["id"]] = (
                body["decision"]
                if case["api"] == "evaluation"
                else [e["decision"] for e in body["evaluations"]]
            )
    finally:
        probe.close()
    return found


def test_every_todo_case_is_decided_as_the_corpus_says(cerbos: CerbosPdp) -> None:
    report = run_authzen_checks(cerbos.base_url, corpora=["todo"], only="interop.todo.*")
    assert len(report.rows) == len(load("todo").entries) == 43
    assert {r.verdict for r in report.rows} == {"pass"}, [
        (r.id, r.detail) for r in report.rows if r.verdict != "pass"
    ]


def test_cerbos_and_the_sandbox_agree_case_by_case(cerbos: CerbosPdp) -> None:
    with Sandbox(dialect="authzen", world="todo") as sandbox:
        theirs = decisions(sandbox.base_url)
    ours = decisions(cerbos.base_url)
    assert ours == theirs
    assert ours == {c["id"]: c["expected"] for c in load("todo").entries}
