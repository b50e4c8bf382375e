"""Small helpers the row modules share to state a verdict and to describe an answer."""

from __future__ import annotations

import textwrap
from typing import Any

from authzkit.check.results import Finding
from authzkit.client.transport import HttpResponse
from authzkit.wire.spec import error_type

SUBJECT_FIELD = "request_body.subject.token"
SNIPPET = 160  # characters of a body no error type names, shown in a verdict


def passed(detail: str) -> Finding:
    return Finding("pass", detail)


def differs(detail: str) -> Finding:
    """Works, but as the provider's published dialect: ``detail`` names the difference."""
    return Finding("diff", detail)


def failed(expected: str, response: HttpResponse | None = None, came: str | None = None) -> Finding:
    """Neither dialect: what was expected and what came."""
    return Finding("fail", f"expected {expected}; got {came or answer(response)}")


def answer(response: HttpResponse | None) -> str:
    """``HTTP 403 srn:error:unauthorized`` or ``HTTP 500 <snippet>``: an answer in a line."""
    if response is None:
        return "no answer"
    body = response.body()
    return f"HTTP {response.status} {error_type(body) or _gist(body, response.text)}".rstrip()


def _gist(body: Any, text: str) -> str:
    """An OAuth 2.0 error with its description whole (a sentence cut mid-word misleads);
    any other body's first words, cut between words with an ellipsis."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        description = body.get("error_description")
        return (
            f"{body['error']}: {description}"
            if isinstance(description, str) and description
            else body["error"]
        )
    return textwrap.shorten(text, SNIPPET, placeholder=" …")


def body_of(response: HttpResponse) -> Any:
    body = response.body()
    return body if isinstance(body, dict) else {}


def refused(response: HttpResponse) -> bool:
    """A 4xx: the service said no (a 5xx is a fault, not a refusal)."""
    return 400 <= response.status < 500


def typed_error(response: HttpResponse, status: int, kind: str) -> Finding:
    """The verdict for an error SPEC tabulates: ``status`` with ``type`` ``kind``."""
    if response.status == status and error_type(response.body()) == kind:
        return passed(f"HTTP {status} {kind}")
    return failed(f"HTTP {status} {kind}", response)


__all__ = [
    "SUBJECT_FIELD",
    "answer",
    "body_of",
    "differs",
    "failed",
    "passed",
    "refused",
    "typed_error",
]
