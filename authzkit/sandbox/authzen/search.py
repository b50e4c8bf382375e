"""The three AuthZEN searches: every entity of the world of the asked type (every action,
for an action search) that an evaluation would permit, in the world's order, a page at a
time. A page token is opaque to the PEP: the offset and a digest of the request it
continues, so a token sent with a changed request is refused (400), as the spec asks.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from authzkit.sandbox.authzen import requests
from authzkit.sandbox.authzen.decisions import AuthzenService
from authzkit.sandbox.authzen.requests import BadRequest, Page


def _request_of(kind: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The checked search request: the target without its id, every input identified."""
    found: dict[str, Any] = {
        "subject": requests.entity(body, "subject", with_id=kind != "subject"),
        "resource": requests.entity(body, "resource", with_id=kind != "resource"),
        "context": requests.context(body),
    }
    if kind != "action":
        found["action"] = requests.action(body)
    return found


def _candidates(
    service: AuthzenService, kind: str, request: Mapping[str, Any]
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(request with this candidate, the result entry)`` for each candidate, in order."""
    world = service.world
    if kind == "action":
        for name in world.actions:
            yield {**request, "action": {"name": name, "properties": {}}}, {"name": name}
        return
    wanted = request[kind]["type"]
    for entity in world.subjects if kind == "subject" else world.resources:
        if entity.type == wanted:
            candidate = {"type": entity.type, "id": entity.id, "properties": {}}
            yield {**request, kind: candidate}, {"type": entity.type, "id": entity.id}


def _digest(kind: str, request: Mapping[str, Any], limit: int | None) -> str:
    text = json.dumps([kind, request, limit], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _token(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}:{digest}".encode()).decode().rstrip("=")


def _offset(token: str, digest: str) -> int:
    try:
        offset, _, given = (
            base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().partition(":")
        )
        start = int(offset)
    except ValueError:
        raise BadRequest("page.token is not a token this PDP issued") from None
    if given != digest or start < 0:
        raise BadRequest("page.token belongs to another request: send the same request with it")
    return start


def search(service: AuthzenService, kind: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``POST /access/v1/search/{kind}``: ``{"page": {"next_token", "count", "total"},
    "results": [...]}``; ``next_token`` is empty on the last page."""
    request = _request_of(kind, body)
    page: Page = requests.page(body)
    size = page.limit or service.world.page_size
    digest = _digest(kind, request, page.limit)
    start = _offset(page.token, digest) if page.token else 0
    results = [
        entry
        for candidate, entry in _candidates(service, kind, request)
        if service.decision(candidate, count=False)["decision"]
    ]
    shown = results[start : start + size]
    end = start + len(shown)
    next_token = _token(end, digest) if end < len(results) else ""
    return {
        "page": {"next_token": next_token, "count": len(shown), "total": len(results)},
        "results": shown,
    }


__all__ = ["search"]
