"""The authorization request: its body (every SPEC field) and its answer as a typed outcome.

Pure functions, no HTTP: :func:`build_body` writes the request, :func:`parse_outcome`
turns a response into :class:`Authorized`, :class:`ChallengeRequired`, or raises the
:class:`~authzkit.wire.errors.AuthzError` subclass the error table names.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.client.transport import HttpResponse
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import ConfigError, UnexpectedResponseError
from authzkit.wire.redact import Secret, reveal
from authzkit.wire.spec import DEFAULT_RESOURCE_TYPE, is_challenge


def request_hash(body: bytes | str | Mapping[str, Any], algorithm: str = "sha256") -> str:
    """Hash of the body of the request being authorized: unpadded base64url of the digest.

    Bytes are hashed as they are, text as UTF-8. A mapping is first written as canonical
    JSON (sorted keys, no spaces, UTF-8), so equal bodies hash equally; pass the exact bytes
    the front-end sent when you have them. SHA-256 gives 43 characters.
    """
    if isinstance(body, Mapping):
        data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    elif isinstance(body, str):
        data = body.encode()
    elif isinstance(body, bytes | bytearray | memoryview):
        data = bytes(body)
    else:
        raise ConfigError(f"request_hash takes bytes, str or a mapping, not {type(body).__name__}")
    try:
        digest = hashlib.new(algorithm, data).digest()
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"unknown hash algorithm {algorithm!r}") from exc
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def build_body(
    action: str,
    *,
    resource_id: str,
    subject_token: str | Secret,
    resource_type: str = DEFAULT_RESOURCE_TYPE,
    user_agent: str = "authzkit",
    request_hash: str | None = None,
    user_ip: str | None = None,
    challenge_solution: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The authorization request body; optional subject-context fields only when given."""
    subject_context: dict[str, Any] = {"user_agent": user_agent}
    if request_hash is not None:
        subject_context["request_hash"] = request_hash
    if user_ip is not None:
        subject_context["user_ip"] = user_ip
    if challenge_solution is not None:
        subject_context["challenge_solution"] = challenge_solution
    return {
        "action": {
            "name": action,
            "context": {"resource_id": str(resource_id), "resource_type": resource_type},
        },
        "subject": {"token": reveal(subject_token), "context": subject_context},
        "context": dict(context) if context else {},
    }


def parse_outcome(response: HttpResponse) -> Authorized | ChallengeRequired:
    """200 → :class:`Authorized`; a challenge 403 → :class:`ChallengeRequired`; else raise."""
    status = response.status
    if status == 200:
        return Authorized.from_json(response.json())
    if 200 < status < 300:
        raise UnexpectedResponseError(
            f"authorize answered HTTP {status}, expected 200", status=status, body=response.text
        )
    body = response.body()  # parsed once: Locust's verdict may have read it already
    if status == 403 and is_challenge(body):
        return ChallengeRequired.from_json(body)
    raise error_from_response(status, response.content, what="authorize", body=body)


__all__ = ["build_body", "parse_outcome", "request_hash"]
