"""The secret search of the tests: it finds a leak as a person reads it, not random digits."""

from __future__ import annotations

import pytest

from support.leaks import shows


@pytest.mark.parametrize(
    "text",
    [
        '{"pin": "1234"}',
        "pin=1234&x=1",
        "PIN 1234 was sent",
        "answer: 1234.",
        "<td>1234</td>",
        "solution(1234)",
    ],
)
def test_a_numeric_secret_standing_alone_shows(text: str) -> None:
    assert shows("1234", text)


@pytest.mark.parametrize(
    ("secret", "text"),
    [
        ("4321", "challenge 0c5e2a1f-9b3d-4321-8e7f-6a5b4c3d2e1f"),
        ("1234", "IPY_MODEL_c1c312347b2f4a"),
        ("1234", "elapsed_ms=1.9877400000041234"),
        ("1234", "started_at=1795434883.4012341"),
        ("1234", "http://127.0.0.1:41234/"),
        ("1234", "elapsed 0.1234 ms"),
        ("1234", "id 12345"),
        ("123456", "exp 1795123456"),
    ],
)
def test_random_digits_that_contain_it_do_not(secret: str, text: str) -> None:
    assert secret in text and not shows(secret, text)


def test_other_secrets_show_anywhere() -> None:
    assert shows("sandbox-demo-secret", "xsandbox-demo-secretx")
    assert not shows("sandbox-demo-secret", "sandbox-demo")
