"""Request bodies → typed requests, or a 400 that names the offending field.

Bodies are read with a cap (``MAX_BODY_BYTES``); what is required and what is ignored:
docs/internals.md, "Request bodies".
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

ROOT = "request_body"
MAX_BODY_BYTES = 64 * 1024
SUBJECT_CONTEXT_STRINGS = ("request_hash", "user_agent", "user_ip")


class InvalidBody(Exception):
    """The body cannot be used; ``field`` is its path (``request_body.action.name``)."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


class TooLarge(Exception):
    """The body passed ``MAX_BODY_BYTES``."""


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The ``content-length`` header as a number, or None when absent or not a number."""
    value = headers.get("content-length")
    return int(value) if value is not None and value.isdigit() else None


async def read_body(receive: Callable[[], Awaitable[Any]], declared: int | None) -> bytes:
    """The whole body of an ASGI request, refusing to buffer more than ``MAX_BODY_BYTES``."""
    if declared is not None and declared > MAX_BODY_BYTES:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TooLarge
        chunks.append(chunk)
        more = message.get("more_body", False)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@dataclass(frozen=True, slots=True)
class AuthorizeRequest:
    """What the authorize endpoint needs from a body, already type-checked."""

    action: str
    resource_id: str
    resource_type: str
    subject_token: str
    challenge_solution: str | None


@dataclass(frozen=True, slots=True)
class CredentialsRequest:
    """The token endpoint's ``clientId`` / ``clientSecret``."""

    client_id: str
    client_secret: str


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """``POST /sandbox/v1/sessions``: which subject, and an optional lifetime in seconds."""

    subject: str
    ttl: float | None


def parse_json(body: bytes) -> Any:
    """The JSON value of ``body``; an empty or non-JSON body is a 400 on ``request_body``."""
    if not body:
        raise InvalidBody(ROOT, "the body is empty; expected a JSON object")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise InvalidBody(ROOT, "the body is not valid JSON") from exc


def _object(value: Any, field: str) -> dict[str, Any]:
    if value.__class__ is not dict:
        raise InvalidBody(
            field, f"{field} must be a JSON object" + (" (missing)" if value is None else "")
        )
    return value


def _string(value: Any, field: str) -> str:
    if value.__class__ is not str or not value:
        raise InvalidBody(
            field, f"{field} must be a non-empty string" + (" (missing)" if value is None else "")
        )
    return value


def parse_authorize(data: Any) -> AuthorizeRequest:
    """The authorization request body of SPEC "Resources and their fields"."""
    body = _object(data, ROOT)
    action = _object(body.get("action"), "request_body.action")
    name = _string(action.get("name"), "request_body.action.name")
    action_context = _object(action.get("context"), "request_body.action.context")
    resource_id = _string(
        action_context.get("resource_id"), "request_body.action.context.resource_id"
    )
    resource_type = _string(
        action_context.get("resource_type"), "request_body.action.context.resource_type"
    )
    subject = _object(body.get("subject"), "request_body.subject")
    token = _string(subject.get("token"), "request_body.subject.token")
    solution = None
    subject_context = subject.get("context")
    if subject_context is not None:
        subject_context = _object(subject_context, "request_body.subject.context")
        for key in SUBJECT_CONTEXT_STRINGS:
            value = subject_context.get(key)
            if value is not None and value.__class__ is not str:
                raise InvalidBody(
                    f"request_body.subject.context.{key}",
                    f"request_body.subject.context.{key} must be a string",
                )
        solution = subject_context.get("challenge_solution")
        if solution is not None and solution.__class__ is not str:
            raise InvalidBody(
                "request_body.subject.context.challenge_solution",
                "challenge_solution must be a string (a compact JWE)",
            )
    top_context = body.get("context")
    if top_context is not None:
        _object(top_context, "request_body.context")
    return AuthorizeRequest(name, resource_id, resource_type, token, solution)


def parse_credentials(data: Any) -> CredentialsRequest:
    """``{"clientId": …, "clientSecret": …}`` (SPEC endpoint 3)."""
    body = _object(data, ROOT)
    return CredentialsRequest(
        _string(body.get("clientId"), "request_body.clientId"),
        _string(body.get("clientSecret"), "request_body.clientSecret"),
    )


def parse_session(data: Any) -> SessionRequest:
    """``{"subject": "alice", "ttl": 60}`` (``ttl`` optional, positive seconds)."""
    body = _object(data, ROOT)
    subject = _string(body.get("subject"), "request_body.subject")
    ttl = body.get("ttl")
    if ttl is not None and (ttl.__class__ not in (int, float) or not 0 < ttl < 10**9):
        raise InvalidBody("request_body.ttl", "ttl must be a positive number of seconds")
    return SessionRequest(subject, None if ttl is None else float(ttl))


__all__ = [
    "MAX_BODY_BYTES",
    "ROOT",
    "SUBJECT_CONTEXT_STRINGS",
    "AuthorizeRequest",
    "CredentialsRequest",
    "InvalidBody",
    "SessionRequest",
    "TooLarge",
    "declared_length",
    "parse_authorize",
    "parse_credentials",
    "parse_json",
    "parse_session",
    "read_body",
]
