"""Secrets never print; masking keeps JSON shapes; scrub removes known values."""

from __future__ import annotations

import pickle

from authzkit.wire.redact import MASK, Secret, mask, mask_mapping, scrub


def test_secret_hides_in_repr_str_and_format() -> None:
    secret = Secret("hunter2-hunter2")
    for text in (repr(secret), str(secret), f"{secret}", f"{[secret]}"):
        assert "hunter2" not in text
    assert secret.reveal() == "hunter2-hunter2"


def test_secret_survives_pickling_for_worker_processes() -> None:
    assert pickle.loads(pickle.dumps(Secret("abc"))).reveal() == "abc"


def test_mask_mapping_masks_secret_keys_at_any_depth() -> None:
    body = {
        "clientId": "id",
        "clientSecret": "very-secret",
        "subject": {
            "token": "eyJhbGciOi.subject.token",
            "context": {"challenge_solution": "eyJ.jwe", "user_agent": "ua"},
        },
    }
    masked = mask_mapping(body)
    assert masked["clientId"] == "id"
    assert masked["subject"]["context"]["user_agent"] == "ua"
    flat = repr(masked)
    for secret in ("very-secret", "subject.token", "eyJ.jwe"):
        assert secret not in flat
    assert body["clientSecret"] == "very-secret"  # the original is untouched


def test_mask_and_scrub() -> None:
    assert mask("short") == MASK
    assert "abcdefghijklmnopqrstuvwxyz" not in mask("abcdefghijklmnopqrstuvwxyz")
    assert scrub("token=abc123 and abc123", [Secret("abc123"), None]) == f"token={MASK} and {MASK}"
