"""What an AuthZEN request must be, read the spec's way: a JSON object sent as
``application/json``; ``subject``/``resource`` objects with string ``type`` and ``id``
(a search's target may omit its id), ``action`` with a string ``name``, ``properties``
and ``context`` objects; unknown members ignored. Anything else is :class:`BadRequest`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from authzkit.wire.authzen import JSON_CONTENT_TYPE, SEMANTICS, semantic_of


class BadRequest(Exception):
    """A 400: the message names the member that is wrong."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_content_type(value: str | None) -> None:
    """``Content-Type`` must be ``application/json`` (parameters such as charset allowed)."""
    media = (value or "").split(";", 1)[0].strip().lower()
    if media != JSON_CONTENT_TYPE:
        raise BadRequest(f"Content-Type must be {JSON_CONTENT_TYPE}, got {value or 'none'!r}")


def parse_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object (400 when empty, malformed or not an object)."""
    if not body.strip():
        raise BadRequest("the request body is empty")
    try:
        found = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the request body is not valid JSON") from None
    if not isinstance(found, dict):
        raise BadRequest("the request body must be a JSON object")
    return found


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadRequest(f"{where} must be an object")
    return value


def _string(entry: Mapping[str, Any], key: str, where: str) -> str:
    if key not in entry:
        raise BadRequest(f"{where}.{key} is required")
    value = entry[key]
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{where}.{key} must be a non-empty string")
    return value


def _properties(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    found = entry.get("properties", {})
    if found is None:
        return {}
    return dict(_object(found, f"{where}.properties"))


def entity(body: Mapping[str, Any], key: str, *, with_id: bool = True) -> dict[str, Any]:
    """``body[key]`` (``subject`` or ``resource``) checked: ``{"type", "id"?, "properties"}``;
    ``with_id=False`` for a search's target, whose id is ignored."""
    if key not in body:
        raise BadRequest(f"{key} is required")
    entry = _object(body[key], key)
    found: dict[str, Any] = {"type": _string(entry, "type", key)}
    if with_id:
        found["id"] = _string(entry, "id", key)
    found["properties"] = _properties(entry, key)
    return found


def action(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body["action"]`` checked: ``{"name", "properties"}``."""
    if "action" not in body:
        raise BadRequest("action is required")
    entry = _object(body["action"], "action")
    return {"name": _string(entry, "name", "action"), "properties": _properties(entry, "action")}


def context(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body["context"]`` when given (an object), else empty."""
    found = body.get("context")
    return {} if found is None else dict(_object(found, "context"))


def evaluation(body: Mapping[str, Any]) -> dict[str, Any]:
    """One access evaluation request, every member checked."""
    return {
        "subject": entity(body, "subject"),
        "action": action(body),
        "resource": entity(body, "resource"),
        "context": context(body),
    }


def evaluations_list(body: Mapping[str, Any]) -> list[Any]:
    """The ``evaluations`` array (400 when it is not one)."""
    found = body.get("evaluations")
    if found is None:
        return []
    if not isinstance(found, list):
        raise BadRequest("evaluations must be an array")
    return found


def semantic(body: Mapping[str, Any]) -> str:
    """``options.evaluations_semantic``, checked (the default when absent)."""
    options = body.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise BadRequest("options must be an object")
    found = semantic_of(body)
    if found not in SEMANTICS:
        raise BadRequest(f"options.evaluations_semantic must be one of {', '.join(SEMANTICS)}")
    return str(found)


@dataclass(frozen=True)
class Page:
    """A search request's ``page``: the token it continues from and its limit."""

    token: str | None = None
    limit: int | None = None


def page(body: Mapping[str, Any]) -> Page:
    """``page`` checked: ``token`` a string, ``limit`` a non-negative integer."""
    found = body.get("page")
    if found is None:
        return Page()
    entry = _object(found, "page")
    token = entry.get("token")
    if token is not None and not isinstance(token, str):
        raise BadRequest("page.token must be a string")
    limit = entry.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise BadRequest("page.limit must be a non-negative integer")
    return Page(token or None, limit or None)


__all__ = [
    "BadRequest",
    "Page",
    "action",
    "check_content_type",
    "context",
    "entity",
    "evaluation",
    "evaluations_list",
    "page",
    "parse_object",
    "semantic",
]
