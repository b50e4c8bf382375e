""":class:`AuthzenClient`: a PEP's calls to an AuthZEN 1.0 PDP. Discovery happens once, on
the first call; each evaluation answer becomes the outcome users know
(:class:`~authzkit.client.outcomes.Authorized` or :class:`~authzkit.client.outcomes.Denied`,
the PDP's ``context`` kept); a batch's answers come back in request order, checked
against its semantic; a search is an iterator that follows ``page.next_token`` to the end.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from authzkit.client.authzen.exchange import Exchange
from authzkit.client.authzen.metadata import PdpMetadata, discover
from authzkit.client.outcomes import Asked, Authorized, Denied
from authzkit.wire.authzen import (
    ACCESS_EVALUATION_ENDPOINT,
    ACCESS_EVALUATIONS_ENDPOINT,
    ENTITY_KEYS,
    SEARCH_ENDPOINTS,
    SEMANTICS,
    decision_problem,
    evaluations_request,
    merge_defaults,
    next_token,
    search_result_problem,
    semantic_of,
    stops_after,
    with_page_token,
)
from authzkit.wire.errors import ConfigError, UnexpectedResponseError

Outcome = Authorized | Denied


def action_of(action: str | Mapping[str, Any]) -> dict[str, Any]:
    """An action given by name or as an object, as the wire wants it."""
    if isinstance(action, str):
        if not action.strip():
            raise ConfigError("an action needs a name")
        return {"name": action}
    if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
        raise ConfigError(f"an action is a name or an object with a name, got {action!r}")
    return dict(action)


def entity_of(role: str, value: Any, *, needs_id: bool = True) -> dict[str, Any]:
    """A subject or resource object (``type``, ``id`` unless searched for, ``properties``);
    a searched-for kind may be given by its type alone."""
    if isinstance(value, str) and not needs_id:
        value = {"type": value}
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        raise ConfigError(f"the {role} is an object with a type, got {value!r}")
    if needs_id and not isinstance(value.get("id"), str):
        raise ConfigError(f"the {role} needs an id (a string), got {value!r}")
    return dict(value)


def _request(item: Mapping[str, Any]) -> dict[str, Any]:
    """One evaluation's members checked (``action`` may be a name)."""
    found: dict[str, Any] = {}
    for key in ENTITY_KEYS:
        if key in item and item[key] is not None:
            value = item[key]
            found[key] = action_of(value) if key == "action" else entity_of(key, value)
    if item.get("context") is not None:
        if not isinstance(item["context"], Mapping):
            raise ConfigError(f"the context is an object, got {item['context']!r}")
        found["context"] = dict(item["context"])
    return found


def outcome_of(answer: Any, request: Mapping[str, Any], what: str) -> Outcome:
    """The outcome of one decision for ``request`` (what was asked, for its display)."""
    problem = decision_problem(answer)
    if problem is not None:
        raise UnexpectedResponseError(f"{what}: {problem}", status=200, body=answer)
    name = str(request.get("action", {}).get("name", ""))
    resource = request.get("resource", {})
    asked = Asked(name, str(resource.get("id", "")), str(resource.get("type", "")))
    context = dict(answer.get("context") or {})
    if answer["decision"]:
        return Authorized(
            action=name, status="authorized", raw=answer, asked=asked, context=context
        )
    return Denied(action=name, context=context, raw=answer, asked=asked)


def check_answers(decisions: list[bool], asked: int, semantic: str) -> str | None:
    """Why a batch's decisions do not answer ``asked`` evaluations under ``semantic``: more
    answers than questions, or fewer without a short-circuit that allows it. (A PDP that
    evaluates past a short-circuit has its further answers kept.)"""
    if len(decisions) > asked:
        return f"{len(decisions)} answers to {asked} evaluations"
    if len(decisions) < asked and not (decisions and stops_after(semantic, decisions[-1])):
        return f"{len(decisions)} answers to {asked} evaluations under {semantic}"
    return None


class AuthzenClient:
    """Calls to the PDP at ``pdp`` through ``exchange``; ``metadata`` skips discovery."""

    def __init__(self, pdp: str, exchange: Exchange, *, metadata: PdpMetadata | None = None):
        self.pdp = pdp
        self.exchange = exchange
        self._metadata = metadata
        self._lock = threading.Lock()

    def metadata(self) -> PdpMetadata:
        """The PDP's metadata, fetched (and checked) on the first call, then kept."""
        if self._metadata is None:
            with self._lock:
                if self._metadata is None:
                    self._metadata = discover(self.exchange, self.pdp)
        return self._metadata

    def evaluate(
        self,
        action: str | Mapping[str, Any],
        *,
        subject: Mapping[str, Any],
        resource: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> Outcome:
        """One decision (Access Evaluation API): :class:`Authorized` or :class:`Denied`."""
        request = _request(
            {"subject": subject, "action": action, "resource": resource, "context": context}
        )
        url = self.metadata().url(ACCESS_EVALUATION_ENDPOINT)
        answer = self.exchange.post(url, request, name="evaluation")
        return outcome_of(answer, request, "evaluation")

    def evaluations(
        self,
        evaluations: Iterable[Mapping[str, Any]],
        *,
        semantic: str | None = None,
        subject: Mapping[str, Any] | None = None,
        action: str | Mapping[str, Any] | None = None,
        resource: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> list[Outcome]:
        """Many decisions in one call (Access Evaluations API): ``subject``, ``action``,
        ``resource`` and ``context`` are the defaults each item may override; the outcomes
        come in request order, a short-circuit ``semantic`` ending them at its stop."""
        if semantic is not None and semantic not in SEMANTICS:
            raise ConfigError(
                f"unknown evaluations semantic {semantic!r} (one of {', '.join(SEMANTICS)})"
            )
        items = [_request(item) for item in evaluations]
        if not items:
            raise ConfigError("evaluations needs at least one evaluation")
        defaults = _request(
            {"subject": subject, "action": action, "resource": resource, "context": context}
        )
        body = evaluations_request(items, semantic=semantic, **defaults)
        requests = merge_defaults(body)
        for number, request in enumerate(requests, start=1):
            missing = [key for key in ENTITY_KEYS if key not in request]
            if missing:
                raise ConfigError(
                    f"evaluation {number} has no {' and no '.join(missing)}, "
                    f"and no default is given"
                )
        url = self.metadata().url(ACCESS_EVALUATIONS_ENDPOINT)
        answer = self.exchange.post(url, body, name="evaluations")
        answers = answer.get("evaluations")
        if not isinstance(answers, list):
            raise UnexpectedResponseError(
                "evaluations: the answer has no evaluations array", status=200, body=answer
            )
        outcomes = [
            outcome_of(one, requests[min(i, len(requests) - 1)], f"evaluations[{i}]")
            for i, one in enumerate(answers)
        ]
        problem = check_answers([o.authorized for o in outcomes], len(items), semantic_of(body))
        if problem is not None:
            raise UnexpectedResponseError(f"evaluations: {problem}", status=200, body=answer)
        return outcomes

    # -- search ----------------------------------------------------------------------------

    def search(
        self, kind: str, request: Mapping[str, Any], *, limit: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every result of a ``kind`` search (``subject``, ``resource`` or ``action``) for
        ``request``, page after page until ``next_token`` is empty. The endpoint is
        looked up now (a PDP that offers no such search says so at once)."""
        if kind not in SEARCH_ENDPOINTS:
            raise ConfigError(f"a search is for one of {', '.join(SEARCH_ENDPOINTS)}, not {kind!r}")
        if limit is not None and (type(limit) is not int or limit < 0):
            raise ConfigError(f"a page limit is a whole number >= 0, got {limit!r}")
        body = dict(request)
        if limit is not None:
            body["page"] = {"limit": limit}
        url = self.metadata().url(SEARCH_ENDPOINTS[kind])
        return self._pages(kind, url, body)

    def _pages(self, kind: str, url: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        name = f"search:{kind}"
        seen: set[str] = set()
        while True:
            answer = self.exchange.post(url, body, name=name)
            results = answer.get("results")
            if not isinstance(results, list):
                raise UnexpectedResponseError(
                    f"{name}: the answer has no results array", status=200, body=answer
                )
            for result in results:
                problem = search_result_problem(kind, result)
                if problem is not None:
                    raise UnexpectedResponseError(f"{name}: {problem}", status=200, body=answer)
                yield dict(result)
            token = next_token(answer)
            if not token:
                return
            if token in seen:
                raise UnexpectedResponseError(
                    f"{name}: the PDP sent next_token {token!r} a second time (the pages "
                    f"would never end)",
                    status=200,
                    body=answer,
                )
            seen.add(token)
            body = with_page_token(body, token)

    def search_subjects(
        self,
        *,
        subject: str | Mapping[str, Any],
        action: str | Mapping[str, Any],
        resource: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The subjects of a type (``subject``: the type, or an object without id) that
        may perform ``action`` on ``resource``."""
        request = {
            "subject": entity_of("subject", subject, needs_id=False),
            **_request({"action": action, "resource": resource, "context": context}),
        }
        return self.search("subject", request, limit=limit)

    def search_resources(
        self,
        *,
        subject: Mapping[str, Any],
        action: str | Mapping[str, Any],
        resource: str | Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The resources of a type (``resource``: the type, or an object without id) on
        which ``subject`` may perform ``action``."""
        request = {
            "resource": entity_of("resource", resource, needs_id=False),
            **_request({"subject": subject, "action": action, "context": context}),
        }
        return self.search("resource", request, limit=limit)

    def search_actions(
        self,
        *,
        subject: Mapping[str, Any],
        resource: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The actions ``subject`` may perform on ``resource``."""
        request = _request({"subject": subject, "resource": resource, "context": context})
        return self.search("action", request, limit=limit)

    def __repr__(self) -> str:
        return f"AuthzenClient(pdp={self.pdp!r})"


__all__ = ["AuthzenClient", "Outcome", "action_of", "check_answers", "entity_of", "outcome_of"]
