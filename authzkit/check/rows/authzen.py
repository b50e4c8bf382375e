"""Rows of the AuthZEN certification profile, one per test id (``authzen.c-2-2-1`` …), built
from the scenario kept as data (:mod:`authzkit.check.authzen.corpora`). A row whose API the
PDP's metadata does not name (batch, search) is ``not-offered``, never a pass."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from authzkit.check.authzen.corpora import CERTIFICATION, load
from authzkit.check.authzen.probe import APIS, AuthzenProbe
from authzkit.check.results import Finding, RowSpec
from authzkit.check.verdicts import answer, failed, passed
from authzkit.client.transport import HttpResponse
from authzkit.wire import authzen

REPEATS = 3  # c-2-6: the same request this many times
ECHO_ID = "authzkit-check-request-id-0001"


def not_offered(api: str) -> Finding:
    return Finding("not-offered", f"not offered: the PDP's metadata names no {APIS[api]}")


def _json_type(response: HttpResponse) -> bool:
    found = {k.lower(): v for k, v in response.headers.items()}.get("content-type", "")
    return found.split(";")[0].strip() == authzen.JSON_CONTENT_TYPE


def decisions_problem(response: HttpResponse, expected: list[Any]) -> str | None:
    """Why a batch answer is not ``expected`` (``None`` items: any boolean)."""
    body = response.body()
    items = body.get("evaluations") if isinstance(body, Mapping) else None
    if response.status != 200 or not isinstance(items, list):
        return f"HTTP 200 with an evaluations array; got {answer(response)}"
    if len(items) != len(expected):
        return f"{len(expected)} evaluations in request order; got {len(items)}"
    for index, (item, want) in enumerate(zip(items, expected, strict=True)):
        problem = authzen.decision_problem(item)
        if problem:
            return f"evaluations[{index}]: {problem}"
        if want is not None and item["decision"] is not want:
            return f"evaluations[{index}].decision {want}; got {item['decision']}"
    return None


def results_of(response: HttpResponse) -> list[Any] | None:
    body = response.body()
    found = body.get("results") if isinstance(body, Mapping) else None
    return found if response.status == 200 and isinstance(found, list) else None


def results_problem(
    api: str, request: Mapping[str, Any], response: HttpResponse, want: list[str], exactly: bool
) -> str | None:
    """Why a search answer lacks ``want`` (ids, or action names) or, ``exactly``, differs."""
    results = results_of(response)
    if results is None:
        return f"HTTP 200 with a results array; got {answer(response)}"
    kind = api.removeprefix("search_")
    for result in results:
        problem = authzen.search_result_problem(kind, result)
        if problem:
            return problem
        if kind != "action" and result["type"] != request[kind].get("type"):
            return f"results of type {request[kind].get('type')!r}; got {result['type']!r}"
    got = [r["name"] if kind == "action" else r["id"] for r in results]
    if exactly and sorted(got) != sorted(want):
        return f"results {want}; got {got}"
    missing = [w for w in want if w not in got]
    return f"results including {missing}; got {got}" if missing else None


def case_problem(probe: AuthzenProbe, api: str, case: Mapping[str, Any]) -> str | None:
    """Send one case of the scenario and say what is wrong with the answer (``None``: right)."""
    expect = case["expect"]
    if "raw" in case:
        response = probe.post_raw(api, case["raw"], case["content_type"])
    else:
        response = probe.post(api, case["request"])
    if "status" in expect:
        ok = response.status == expect["status"]
        return None if ok else f"HTTP {expect['status']}; got {answer(response)}"
    if "decision" in expect:
        if response.status != 200:
            return f"HTTP 200; got {answer(response)}"
        problem = authzen.decision_problem(response.body())
        if problem:
            return problem
        got = response.body()["decision"]
        return None if got is expect["decision"] else f"decision {expect['decision']}; got {got}"
    if "evaluations" in expect:
        return decisions_problem(response, expect["evaluations"])
    return results_problem(
        api, case["request"], response, expect["results"], expect.get("exactly", False)
    )


def _label(case: Mapping[str, Any]) -> str:
    if "raw" in case:
        return f"{case['content_type']} body {case['raw'][:30]!r}"
    return json.dumps(case["request"], separators=(",", ":"))[:90]


def check_cases(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    """Every case of ``test`` answered as the scenario says."""
    apis = [case.get("api", test["api"]) for case in test["cases"]]
    for api in apis:
        if probe.url(api) is None:
            return not_offered(api)
    problems = [
        f"{_label(case)}: expected {problem}"
        for api, case in zip(apis, test["cases"], strict=True)
        if (problem := case_problem(probe, api, case))
    ]
    if problems:
        return Finding("fail", f"{len(problems)} of {len(apis)} cases: " + "; ".join(problems))
    count = len(apis)
    return passed(f"{count} case{'s' if count != 1 else ''} answered as the scenario says")


def check_request_id(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    case = test["cases"][0]
    echoed = probe.post("evaluation", case["request"], headers={authzen.REQUEST_ID_HEADER: ECHO_ID})
    got = {k.lower(): v for k, v in echoed.headers.items()}.get(authzen.REQUEST_ID_HEADER.lower())
    if echoed.status != 200:
        return failed("HTTP 200", echoed)
    if got != ECHO_ID:
        return Finding(
            "fail", f"expected {authzen.REQUEST_ID_HEADER}: {ECHO_ID} echoed; got {got or 'none'}"
        )
    without = probe.post_raw(
        "evaluation", json.dumps(case["request"]), authzen.JSON_CONTENT_TYPE, request_id=False
    )
    if without.status != 200:
        return failed(f"HTTP 200 without {authzen.REQUEST_ID_HEADER}", without)
    return passed(f"{authzen.REQUEST_ID_HEADER} echoed; a request without one answered")


def check_idempotent(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    case = test["cases"][0]
    problems = {case_problem(probe, "evaluation", case) for _ in range(REPEATS)}
    if problems != {None}:
        return Finding("fail", "; ".join(sorted(p for p in problems if p)))
    return passed(f"the same decision {REPEATS} times in a row")


def check_transport(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    case = test["cases"][0]
    problem = case_problem(probe, "evaluation", case)
    if problem:
        return Finding("fail", f"unknown field: expected {problem}")
    response = probe.post("evaluation", case["request"])
    if not _json_type(response):
        ctype = {k.lower(): v for k, v in response.headers.items()}.get("content-type")
        return Finding("fail", f"expected Content-Type application/json; got {ctype}")
    return passed("JSON answers, an unknown member ignored (400s: authzen.c-2-4)")


def check_pagination(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    case = test["cases"][0]
    api = test["api"]
    if probe.url(api) is None:
        return not_offered(api)
    first = probe.post(api, case["request"])
    if results_of(first) is None:
        return failed("HTTP 200 with a results array for page.limit 1", first)
    page = first.body().get("page")
    if page is not None and not isinstance(page, Mapping):
        return Finding("fail", f"expected page to be an object; got {page!r}")
    token = page.get("next_token") if isinstance(page, Mapping) else None
    if token is not None and not isinstance(token, str):
        return Finding("fail", f"expected page.next_token a string; got {token!r}")
    if not token:
        return passed("page.limit accepted; one page (no next_token)")
    follow = probe.post(api, authzen.with_page_token(case["request"], token))
    body = follow.body() if results_of(follow) is not None else None
    following = body.get("page") if isinstance(body, Mapping) else None
    if not isinstance(following, Mapping) or not isinstance(following.get("next_token"), str):
        return failed("HTTP 200, results and page.next_token a string after page.token", follow)
    return passed("page.limit accepted, page.token followed, next_token a string")


def _url_problem(member: str, value: Any, scheme: str) -> str | None:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme != scheme or not parts.netloc:
        return f"{member} is not a {scheme} URL: {value!r}"
    return None


def check_metadata(test: Mapping[str, Any], probe: AuthzenProbe) -> Finding:
    response = probe.metadata_response(fresh=True)
    if response.status != 200 or not _json_type(response):
        return failed("HTTP 200 application/json at the well-known URL", response)
    body = response.body()
    problem = authzen.metadata_problem(body, probe.base_url)
    scheme = urlsplit(probe.base_url).scheme  # https, or http on a loopback PDP
    for member in authzen.ENDPOINT_MEMBERS:
        if problem is None and (member in body or member == authzen.ACCESS_EVALUATION_ENDPOINT):
            problem = _url_problem(member, body.get(member), scheme)
    capabilities = body.get(authzen.CAPABILITIES, []) if isinstance(body, Mapping) else []
    if problem is None and (
        not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities)
    ):
        problem = f"{authzen.CAPABILITIES} is not an array of strings"
    signed = body.get(authzen.SIGNED_METADATA) if isinstance(body, Mapping) else None
    if problem is None and signed is not None and not _has_issuer(signed):
        problem = f"{authzen.SIGNED_METADATA} is not a JWT with an iss claim"
    if problem:
        return Finding("fail", problem)
    offered = [m for m in authzen.ENDPOINT_MEMBERS if m in body]
    extra = " (signed_metadata's signature not verified)" if signed is not None else ""
    return passed(f"names this PDP; offers {', '.join(offered)}{extra}")


def _has_issuer(token: Any) -> bool:
    import base64

    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        return False
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return False
    return isinstance(claims, dict) and isinstance(claims.get("iss"), str)


CHECKS: dict[str, Callable[[Mapping[str, Any], AuthzenProbe], Finding]] = {
    "cases": check_cases,
    "request_id": check_request_id,
    "idempotent": check_idempotent,
    "transport": check_transport,
    "pagination": check_pagination,
    "metadata": check_metadata,
}


def _spec(test: Mapping[str, Any]) -> str:
    return f"AuthZEN certification {test['level']} §{test['id']}"


def _requests(test: Mapping[str, Any]) -> int:
    extra = {"idempotent": REPEATS, "request_id": 2, "transport": 2, "pagination": 2}
    return max(len(test["cases"]), extra.get(test["check"], 1))


ROWS = tuple(
    RowSpec(
        f"authzen.{test['id']}",
        test["title"],
        _spec(test),
        partial(CHECKS[test["check"]], test),
        _requests(test),
    )
    for test in load(CERTIFICATION).entries
)

__all__ = ["CHECKS", "ROWS", "case_problem", "decisions_problem", "not_offered", "results_of"]
