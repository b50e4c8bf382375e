"""Rows of the AuthZEN interop corpora, one per case (``interop.todo.evaluation-01`` …): each
sends the case's request and compares the PDP's decisions (or search results, every page
followed) with the corpus's. Search rows on a PDP without search are ``not-offered``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from authzkit.check.authzen.corpora import INTEROP, load
from authzkit.check.authzen.probe import AuthzenProbe
from authzkit.check.results import Finding, RowSpec
from authzkit.check.rows.authzen import decisions_problem, not_offered, results_of
from authzkit.check.verdicts import answer, passed
from authzkit.wire import authzen

MAX_PAGES = 50


def _decision(probe: AuthzenProbe, case: Mapping[str, Any]) -> Finding:
    response = probe.post("evaluation", case["request"])
    body = response.body()
    problem = authzen.decision_problem(body) if response.status == 200 else answer(response)
    if problem:
        return Finding("fail", f"expected a decision; got {problem}")
    if body["decision"] is not case["expected"]:
        return Finding("fail", f"expected decision {case['expected']}; got {body['decision']}")
    return passed(f"decision {body['decision']}")


def _decisions(probe: AuthzenProbe, case: Mapping[str, Any]) -> Finding:
    response = probe.post("evaluations", case["request"])
    problem = decisions_problem(response, case["expected"])
    if problem:
        return Finding("fail", f"expected {problem}")
    return passed(f"decisions {case['expected']} in request order")


def _search(api: str, probe: AuthzenProbe, case: Mapping[str, Any]) -> Finding:
    kind = api.removeprefix("search_")
    key = "name" if kind == "action" else "id"
    body: Mapping[str, Any] = case["request"]
    found: list[Any] = []
    for _ in range(MAX_PAGES):
        response = probe.post(api, body)
        results = results_of(response)
        if results is None:
            return Finding("fail", f"expected HTTP 200 with results; got {answer(response)}")
        found += [r.get(key) if isinstance(r, Mapping) else r for r in results]
        token = authzen.next_token(response.body())
        if not token or not results:
            break
        body = authzen.with_page_token(case["request"], token)
    want = [r[key] for r in case["expected"]]
    if sorted(map(str, found)) != sorted(map(str, want)):
        return Finding("fail", f"expected {kind}s {want}; got {found}")
    return passed(f"{len(found)} {kind}s, as the corpus says")


def check_case(case: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    api = case["api"]
    if probe.url(api) is None:
        return not_offered(api)
    if api == "evaluation":
        return _decision(probe, case)
    if api == "evaluations":
        return _decisions(probe, case)
    return _search(api, probe, case)


def rows_of(name: str) -> tuple[RowSpec, ...]:
    """The rows of corpus ``name`` (one of :data:`INTEROP`)."""
    corpus = load(name)
    return tuple(
        RowSpec(
            f"interop.{name}.{case['id']}",
            f"{corpus.title}: {case['api']} case {case['id']}",
            f"{corpus.version} ({corpus.source})",
            partial(check_case, case),
            1,
        )
        for case in corpus.entries
    )


ROWS = {name: rows_of(name) for name in INTEROP}

__all__ = ["ROWS", "check_case", "rows_of"]
