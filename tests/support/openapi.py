"""What both OpenAPI test modules share: schema look-ups in a document, where each answer
is described, and which error types each dialect's sandbox sends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import requests
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from authzkit.wire.error_table import ERRORS

DOCUMENT_URI = "urn:authzkit:openapi"
USER_AGENT = "authzkit-hardening/1.0"


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


def _validator(document: dict[str, Any], *pointer: str) -> Draft202012Validator:
    """A validator for the schema at ``pointer`` inside the document ($refs resolved)."""
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    registry = Registry().with_resource(DOCUMENT_URI, resource)
    return Draft202012Validator(
        {"$ref": f"{DOCUMENT_URI}#/{_pointer(*pointer)}"}, registry=registry
    )


def _resolve(document: dict[str, Any], node: Any) -> Any:
    """``node`` with a local ``$ref`` followed (one level is all the document uses)."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def _documented_types(
    document: dict[str, Any], node: Any, seen: frozenset[str] = frozenset()
) -> Iterator[tuple[str, int]]:
    """Every ``(type, status)`` pair of the error schemas reachable from ``node``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref not in seen:
                yield from _documented_types(document, _resolve(document, node), seen | {ref})
            return
        properties = node.get("properties", {})
        type_ = properties.get("type", {}).get("const") if isinstance(properties, dict) else None
        status = properties.get("status", {}).get("const") if isinstance(properties, dict) else None
        if isinstance(type_, str) and type_.startswith("srn:error:") and isinstance(status, int):
            yield type_, status
        for value in node.values():
            yield from _documented_types(document, value, seen)
    elif isinstance(node, list):
        for value in node:
            yield from _documented_types(document, value, seen)


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def _media_examples(document: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(pointer to the media type's schema, example value)`` for every media-type example."""
    places: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    for path, method, operation in _operations(document):
        body = operation.get("requestBody", {}).get("content", {})
        for media, content in body.items():
            places.append((("paths", path, method, "requestBody", "content", media), content))
        for status, response in operation["responses"].items():
            for media, content in _resolve(document, response).get("content", {}).items():
                places.append(
                    (("paths", path, method, "responses", status, "content", media), content)
                )
    for name, response in document["components"].get("responses", {}).items():
        for media, content in response.get("content", {}).items():
            places.append((("components", "responses", name, "content", media), content))
    for pointer, content in places:
        if "example" in content:
            yield (*pointer, "schema"), content["example"]
        for example in content.get("examples", {}).values():
            yield (*pointer, "schema"), _resolve(document, example)["value"]


@dataclass
class Exchange:
    """One real request to the sandbox, and where the document describes its answer."""

    path: str
    method: str
    response: requests.Response


# The error types only one dialect's sandbox sends: the draft has no bad_authorize_request
# (a malformed body is its 400 bad_request); the published dialect words a wrong token-endpoint
# credential as an OAuth error and an access token failure as the bare unauthenticated 401.
PUBLISHED_ONLY = frozenset({"srn:error:bad_authorize_request"})
DRAFT_ONLY = frozenset(
    {"srn:error:bad_request", "srn:error:invalid_client", "srn:error:invalid_token"}
)
DRAFT_TYPES = frozenset(ERRORS) - PUBLISHED_ONLY
PUBLISHED_TYPES = frozenset(ERRORS) - DRAFT_ONLY
ROUTING_RESPONSES = {404: "NotFound", 405: "MethodNotAllowed"}


def _consts(
    document: dict[str, Any], node: Any, seen: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Every ``srn:error:*`` const of a ``type`` property reachable from ``node``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref not in seen:
                yield from _consts(document, _resolve(document, node), seen | {ref})
            return
        properties = node.get("properties", {})
        type_ = properties.get("type", {}).get("const") if isinstance(properties, dict) else None
        if isinstance(type_, str) and type_.startswith("srn:error:"):
            yield type_
        for key, value in node.items():
            if key != "examples":
                yield from _consts(document, value, seen)
    elif isinstance(node, list):
        for value in node:
            yield from _consts(document, value, seen)


def placed_types(document: dict[str, Any]) -> set[tuple[str, int]]:
    """Every ``(type, status)`` by where the document places it: under an operation's
    response of that status, or a routing response (404, 405)."""
    placed: set[tuple[str, int]] = set()
    for _, _, operation in _operations(document):
        for status, response in operation["responses"].items():
            placed.update((type_, int(status)) for type_ in _consts(document, response))
    for status, name in ROUTING_RESPONSES.items():
        response = document["components"]["responses"][name]
        placed.update((type_, status) for type_ in _consts(document, response))
    return placed


def response_pointer(document: dict[str, Any], exchange: Exchange) -> tuple[str, ...]:
    """Where the document describes this answer; fails when it describes none."""
    status = exchange.response.status_code
    if not exchange.path:
        name = ROUTING_RESPONSES[status]
        return ("components", "responses", name, "content", "application/json", "schema")
    responses = document["paths"][exchange.path][exchange.method]["responses"]
    assert str(status) in responses, f"undocumented status {status}: {exchange.response.text}"
    return (
        "paths",
        exchange.path,
        exchange.method,
        "responses",
        str(status),
        "content",
        "application/json",
        "schema",
    )


__all__ = [
    "DOCUMENT_URI",
    "DRAFT_ONLY",
    "DRAFT_TYPES",
    "PUBLISHED_ONLY",
    "PUBLISHED_TYPES",
    "ROUTING_RESPONSES",
    "USER_AGENT",
    "Exchange",
    "_documented_types",
    "_media_examples",
    "_operations",
    "_pointer",
    "_resolve",
    "_validator",
    "placed_types",
    "response_pointer",
]
