"""The AuthZEN PDP behind the sandbox's endpoints: one evaluation, a batch under its
semantic (defaults merged, answers in request order), and the three searches. An entity
the world knows brings its properties; the request's own properties win over them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from authzkit.sandbox.authzen import requests
from authzkit.sandbox.authzen.policy import decide
from authzkit.sandbox.authzen.requests import BadRequest
from authzkit.sandbox.authzen.world import AuthzenWorld
from authzkit.wire.authzen import merge_defaults, stops_after
from authzkit.wire.locks import LazilyLocked


class AuthzenCounters(LazilyLocked):
    """What ``GET /sandbox/v1/stats`` reports on AuthZEN: decisions by value, calls per
    endpoint and refused requests."""

    def __init__(self) -> None:
        self.decisions: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    def decision(self, allowed: bool) -> None:
        with self._lock:
            self.decisions["permit" if allowed else "deny"] += 1

    def call(self, endpoint: str) -> None:
        with self._lock:
            self.calls[endpoint] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"decisions": dict(self.decisions), "calls": dict(self.calls)}

    def clear(self) -> None:
        with self._lock:
            self.decisions.clear()
            self.calls.clear()


class AuthzenService:
    """Decides for ``world``; every answer is a JSON-ready dict."""

    def __init__(self, world: AuthzenWorld) -> None:
        self.world = world
        self.counters = AuthzenCounters()

    # ------------------------------------------------------------- evaluation
    def _resolved(self, kind: str, given: Mapping[str, Any]) -> dict[str, Any]:
        known = self.world.known(kind, given["type"], given["id"])
        properties = {**(known.properties if known is not None else {}), **given["properties"]}
        return {**given, "properties": properties}

    def decision(self, request: Mapping[str, Any], *, count: bool = True) -> dict[str, Any]:
        """The Decision for a checked request (:func:`requests.evaluation`); ``count=False``
        for a search's candidates, which are not decisions asked for."""
        resolved = {
            **request,
            "subject": self._resolved("subject", request["subject"]),
            "resource": self._resolved("resource", request["resource"]),
        }
        rule = decide(self.world.rules, resolved)
        allowed = rule is not None and rule.effect == "permit"
        if count:
            self.counters.decision(allowed)
        answer: dict[str, Any] = {"decision": allowed}
        if rule is not None and rule.context is not None:
            answer["context"] = dict(rule.context)
        return answer

    def evaluate(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /access/v1/evaluation``."""
        return self.decision(requests.evaluation(body))

    def evaluations(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /access/v1/evaluations``: one Decision without a non-empty ``evaluations``
        array; else one per item in order, an item that is not a valid request denied with
        its error in ``context``, stopped early by a short-circuit semantic."""
        items = requests.evaluations_list(body)
        semantic = requests.semantic(body)
        if not items:
            return self.decision(requests.evaluation(body))
        for key in ("subject", "action", "resource", "context"):
            if key in body and not isinstance(body[key], Mapping):
                raise BadRequest(f"{key} must be an object")
        answers = []
        for n, merged in enumerate(merge_defaults(body)):
            if not isinstance(items[n], Mapping):
                answer = _failed(f"evaluations[{n}] must be an object")
            else:
                try:
                    answer = self.decision(requests.evaluation(merged))
                except BadRequest as exc:
                    answer = _failed(f"evaluations[{n}]: {exc.message}")
            answers.append(answer)
            if stops_after(semantic, answer["decision"]):
                break
        return {"evaluations": answers}


def _failed(message: str) -> dict[str, Any]:
    """A failed item under the batch's semantics: closed, with the error in its context."""
    return {"decision": False, "context": {"error": {"status": 400, "message": message}}}


__all__ = ["AuthzenCounters", "AuthzenService"]
