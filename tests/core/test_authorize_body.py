"""The request body and the request hash (pure functions, no HTTP)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from authzkit import request_hash
from authzkit.client.authorize import build_body
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret


def test_request_hash_is_unpadded_base64url_sha256() -> None:
    expected = base64.urlsafe_b64encode(hashlib.sha256(b'{"amount":10}').digest())
    assert request_hash(b'{"amount":10}') == expected.decode().rstrip("=")
    assert len(request_hash(b"")) == 43
    assert "=" not in request_hash("x") and "+" not in request_hash("x" * 1000)


def test_request_hash_of_text_and_mapping() -> None:
    assert request_hash("é") == request_hash("é".encode())
    # a mapping is hashed as canonical JSON, so key order does not matter
    assert request_hash({"b": 1, "a": "x"}) == request_hash(b'{"a":"x","b":1}')


def test_request_hash_algorithm_is_selectable() -> None:
    assert len(request_hash(b"body", algorithm="sha512")) == 86
    with pytest.raises(ConfigError, match="unknown hash algorithm"):
        request_hash(b"body", algorithm="no-such-hash")


def test_body_carries_every_spec_field() -> None:
    body = build_body(
        "transfer_funds",
        resource_id="r-1",
        resource_type="srn:resource:account",
        subject_token=Secret("subject-jwt"),
        user_agent="ua/1",
        request_hash="h",
        user_ip="10.0.0.1",
        challenge_solution="a.b.c.d.e",
        context={"channel": "web"},
    )
    assert body == {
        "action": {
            "name": "transfer_funds",
            "context": {"resource_id": "r-1", "resource_type": "srn:resource:account"},
        },
        "subject": {
            "token": "subject-jwt",
            "context": {
                "user_agent": "ua/1",
                "request_hash": "h",
                "user_ip": "10.0.0.1",
                "challenge_solution": "a.b.c.d.e",
            },
        },
        "context": {"channel": "web"},
    }


def test_body_leaves_out_what_was_not_given() -> None:
    body = build_body("a", resource_id="r", subject_token="t")
    assert body["subject"]["context"] == {"user_agent": "authzkit"}
    assert body["context"] == {}
