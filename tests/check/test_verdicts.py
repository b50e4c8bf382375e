"""How a verdict quotes an answer no SPEC error type names: whole sentences, never mid-word."""

from __future__ import annotations

import json

from authzkit.check.verdicts import SNIPPET, answer
from authzkit.client.transport import HttpResponse

DESCRIPTION = (
    "Client authentication with signed JWT failed: the signature does not verify "
    "with the client's registered public key (kid 'k1'); sign with the key you "
    "registered, or register the key you sign with."
)


def response(status: int, body: bytes) -> HttpResponse:
    return HttpResponse(status=status, headers={"Content-Type": "application/json"}, content=body)


def test_an_oauth_error_keeps_its_whole_description() -> None:
    body = json.dumps({"error": "invalid_client", "error_description": DESCRIPTION}).encode()
    assert answer(response(400, body)) == f"HTTP 400 invalid_client: {DESCRIPTION}"


def test_a_long_unknown_body_is_cut_between_words() -> None:
    text = "<html><body>" + " ".join(["gateway"] * 80) + "</body></html>"
    quoted = answer(response(502, text.encode()))
    assert quoted.startswith("HTTP 502 <html><body>gateway gateway")
    assert quoted.endswith(" …") and len(quoted) <= len("HTTP 502 ") + SNIPPET
    assert all(word in {"<html><body>gateway", "gateway", "…"} for word in quoted.split()[2:])


def test_a_typed_error_is_named() -> None:
    body = json.dumps({"type": "srn:error:unauthorized", "status": 403}).encode()
    assert answer(response(403, body)) == "HTTP 403 srn:error:unauthorized"
