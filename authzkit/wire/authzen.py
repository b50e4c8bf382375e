"""Wire facts of the OpenID AuthZEN Authorization API 1.0 (Final) shared by the client, the
sandbox and ``authzkit check``: paths, metadata members, batch semantics, the request-id
header, and the pure rules both sides apply (defaults merged into each evaluation,
short-circuits, paging, the shape of entities and answers). Standard library only.
Source: openid/authzen ``api/authorization-api-1_0.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

SPEC_VERSION = "1.0"
METADATA_PATH = "/.well-known/authzen-configuration"
REQUEST_ID_HEADER = "X-Request-ID"
JSON_CONTENT_TYPE = "application/json"

# Metadata members (spec § "PDP Metadata"): the identifier, then one URL per API.
POLICY_DECISION_POINT = "policy_decision_point"
ACCESS_EVALUATION_ENDPOINT = "access_evaluation_endpoint"
ACCESS_EVALUATIONS_ENDPOINT = "access_evaluations_endpoint"
SEARCH_SUBJECT_ENDPOINT = "search_subject_endpoint"
SEARCH_RESOURCE_ENDPOINT = "search_resource_endpoint"
SEARCH_ACTION_ENDPOINT = "search_action_endpoint"
CAPABILITIES = "capabilities"
SIGNED_METADATA = "signed_metadata"

EVALUATION_PATH = "/access/v1/evaluation"
EVALUATIONS_PATH = "/access/v1/evaluations"
SEARCH_KINDS = ("subject", "resource", "action")
SEARCH_PATHS = {kind: f"/access/v1/search/{kind}" for kind in SEARCH_KINDS}
SEARCH_ENDPOINTS = {
    "subject": SEARCH_SUBJECT_ENDPOINT,
    "resource": SEARCH_RESOURCE_ENDPOINT,
    "action": SEARCH_ACTION_ENDPOINT,
}
# Each endpoint member with the path a PEP uses when the metadata does not name it.
DEFAULT_PATHS = {
    ACCESS_EVALUATION_ENDPOINT: EVALUATION_PATH,
    ACCESS_EVALUATIONS_ENDPOINT: EVALUATIONS_PATH,
    **{SEARCH_ENDPOINTS[kind]: SEARCH_PATHS[kind] for kind in SEARCH_KINDS},
}
ENDPOINT_MEMBERS = tuple(DEFAULT_PATHS)
REQUIRED_MEMBERS = (POLICY_DECISION_POINT, ACCESS_EVALUATION_ENDPOINT)

EXECUTE_ALL = "execute_all"
DENY_ON_FIRST_DENY = "deny_on_first_deny"
PERMIT_ON_FIRST_PERMIT = "permit_on_first_permit"
SEMANTICS = (EXECUTE_ALL, DENY_ON_FIRST_DENY, PERMIT_ON_FIRST_PERMIT)
DEFAULT_SEMANTIC = EXECUTE_ALL

# The request's entities, in the order the spec lists them; ``context`` is optional.
ENTITY_KEYS = ("subject", "action", "resource")
DEFAULTABLE_KEYS = (*ENTITY_KEYS, "context")


def metadata_url(pdp: str) -> str:
    """Where ``pdp``'s metadata lives: the well-known string inserted between the host and
    the path (``https://h/t1`` → ``https://h/.well-known/authzen-configuration/t1``)."""
    parts = urlsplit(pdp)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, METADATA_PATH + path, "", ""))


def endpoint_url(pdp: str, member: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The URL of endpoint ``member``: the metadata's value, else ``pdp`` + the default path."""
    found = (metadata or {}).get(member)
    if isinstance(found, str) and found:
        return found
    return pdp.rstrip("/") + DEFAULT_PATHS[member]


def metadata_document(pdp: str, members: Iterable[str] = ENDPOINT_MEMBERS) -> dict[str, str]:
    """A metadata document for a PDP at ``pdp`` serving ``members`` at their default paths."""
    base = pdp.rstrip("/")
    return {POLICY_DECISION_POINT: base, **{m: base + DEFAULT_PATHS[m] for m in members}}


def metadata_problem(document: Any, fetched_for: str) -> str | None:
    """Why a metadata document must not be used (``None`` when it may): not an object, a
    required member missing, or a ``policy_decision_point`` other than the URL it was
    fetched for (the spec's mix-up defence; a trailing slash is not a difference)."""
    if not isinstance(document, Mapping):
        return "the metadata is not a JSON object"
    for member in REQUIRED_MEMBERS:
        if not isinstance(document.get(member), str) or not document[member]:
            return f"the metadata has no {member}"
    if document[POLICY_DECISION_POINT].rstrip("/") != fetched_for.rstrip("/"):
        return (
            f"the metadata's {POLICY_DECISION_POINT} {document[POLICY_DECISION_POINT]!r} "
            f"is not {fetched_for!r}, the PDP it was fetched for"
        )
    return None


def entity(
    type_: str, id_: str | None = None, properties: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A subject or resource: ``{"type", "id"?, "properties"?}`` (a search target has no id)."""
    found: dict[str, Any] = {"type": type_}
    if id_ is not None:
        found["id"] = id_
    if properties:
        found["properties"] = dict(properties)
    return found


def action(name: str, properties: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An action: ``{"name", "properties"?}``."""
    return {"name": name, **({"properties": dict(properties)} if properties else {})}


def property_value(text: str) -> Any:
    """A ``K=V`` value as the CLI reads it: JSON when it parses, else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def is_batch(body: Mapping[str, Any]) -> bool:
    """True when an evaluations request carries a non-empty ``evaluations`` array (else it
    behaves as one evaluation, as the spec says)."""
    found = body.get("evaluations")
    return isinstance(found, list) and len(found) > 0


def merge_defaults(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each item of ``body["evaluations"]`` with the top-level ``subject``, ``action``,
    ``resource`` and ``context`` filled in where the item omits them. An item's own key
    replaces the default whole (no merging inside an entity)."""
    merged = []
    for item in body.get("evaluations") or ():
        own = item if isinstance(item, Mapping) else {}
        one = {
            key: own[key] if key in own else body[key]
            for key in DEFAULTABLE_KEYS
            if key in own or key in body
        }
        merged.append(one)
    return merged


def semantic_of(body: Mapping[str, Any]) -> Any:
    """The requested ``options.evaluations_semantic`` (the default when absent; any other
    value is returned as found, for the caller to refuse)."""
    options = body.get("options")
    if isinstance(options, Mapping) and "evaluations_semantic" in options:
        return options["evaluations_semantic"]
    return DEFAULT_SEMANTIC


def stops_after(semantic: str, decision: bool) -> bool:
    """True when ``decision`` ends a batch under ``semantic`` (the short-circuits: a deny
    under ``deny_on_first_deny``, a permit under ``permit_on_first_permit``)."""
    if semantic == DENY_ON_FIRST_DENY:
        return not decision
    if semantic == PERMIT_ON_FIRST_PERMIT:
        return decision
    return False


def evaluations_request(
    evaluations: Iterable[Mapping[str, Any]],
    *,
    semantic: str | None = None,
    **defaults: Any,
) -> dict[str, Any]:
    """An evaluations body: ``defaults`` (subject/action/resource/context) at the top level,
    the items as given, ``options.evaluations_semantic`` when one is named."""
    unknown = set(defaults) - set(DEFAULTABLE_KEYS)
    if unknown:
        raise TypeError(f"not an evaluations default: {', '.join(sorted(unknown))}")
    if semantic is not None and semantic not in SEMANTICS:
        raise ValueError(
            f"unknown evaluations semantic {semantic!r} (one of {', '.join(SEMANTICS)})"
        )
    body: dict[str, Any] = {k: v for k, v in defaults.items() if v is not None}
    if semantic is not None:
        body["options"] = {"evaluations_semantic": semantic}
    body["evaluations"] = [dict(item) for item in evaluations]
    return body


def with_page_token(body: Mapping[str, Any], token: str) -> dict[str, Any]:
    """The follow-up search request: the same body with ``page.token`` set (``limit`` kept)."""
    page = dict(body.get("page") or {})
    page["token"] = token
    return {**body, "page": page}


def next_token(response: Mapping[str, Any]) -> str:
    """The response's ``page.next_token``; ``""`` (the end) when there is no page."""
    page = response.get("page")
    found = page.get("next_token") if isinstance(page, Mapping) else None
    return found if isinstance(found, str) else ""


def decision_problem(answer: Any) -> str | None:
    """Why an evaluation answer is not a Decision (``decision`` boolean, ``context`` object)."""
    if not isinstance(answer, Mapping):
        return "the answer is not a JSON object"
    if not isinstance(answer.get("decision"), bool):
        return "the answer has no boolean decision"
    if "context" in answer and not isinstance(answer["context"], Mapping):
        return "the answer's context is not an object"
    return None


def search_result_problem(kind: str, result: Any) -> str | None:
    """Why one search result is not an entity of ``kind`` (``name`` for actions, else
    ``type`` and ``id``)."""
    keys = ("name",) if kind == "action" else ("type", "id")
    if not isinstance(result, Mapping) or any(not isinstance(result.get(k), str) for k in keys):
        return f"a {kind} search result needs {' and '.join(keys)} as strings: {result!r}"
    return None


__all__ = [
    "ACCESS_EVALUATIONS_ENDPOINT",
    "ACCESS_EVALUATION_ENDPOINT",
    "CAPABILITIES",
    "DEFAULTABLE_KEYS",
    "DEFAULT_PATHS",
    "DEFAULT_SEMANTIC",
    "DENY_ON_FIRST_DENY",
    "ENDPOINT_MEMBERS",
    "ENTITY_KEYS",
    "EVALUATIONS_PATH",
    "EVALUATION_PATH",
    "EXECUTE_ALL",
    "JSON_CONTENT_TYPE",
    "METADATA_PATH",
    "PERMIT_ON_FIRST_PERMIT",
    "POLICY_DECISION_POINT",
    "REQUEST_ID_HEADER",
    "REQUIRED_MEMBERS",
    "SEARCH_ACTION_ENDPOINT",
    "SEARCH_ENDPOINTS",
    "SEARCH_KINDS",
    "SEARCH_PATHS",
    "SEARCH_RESOURCE_ENDPOINT",
    "SEARCH_SUBJECT_ENDPOINT",
    "SEMANTICS",
    "SIGNED_METADATA",
    "SPEC_VERSION",
    "action",
    "decision_problem",
    "endpoint_url",
    "entity",
    "evaluations_request",
    "is_batch",
    "merge_defaults",
    "metadata_document",
    "metadata_problem",
    "metadata_url",
    "next_token",
    "property_value",
    "search_result_problem",
    "semantic_of",
    "stops_after",
    "with_page_token",
]
