"""Typed outcomes: both 200 shapes, the challenge, and the provider's looser variants."""

from __future__ import annotations

from typing import Any

import pytest

from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.wire.errors import UnexpectedResponseError
from authzkit.wire.spec import is_challenge

SHAPE_A: dict[str, Any] = {
    "action": {"name": "show_account_balance_public", "response": None, "status": "authorized"},
    "id": 7,
    "optional_actions": [],
}
SHAPE_B = {"action": {"name": "transfer_funds", "status": "authorized", "optional_actions": []}}
CHALLENGE: dict[str, Any] = {
    "type": "srn:error:challenge_required",
    "challenge": {
        "id": "0b7c4a4e-6f35-4c1f-9c1a-3a9f0c9d2b11",
        "required_types": ["pin", "totp"],
        "type": "srn:error:challenge_required",
        "details": {"error": "challenge_required"},
    },
}


def test_shape_a_and_b() -> None:
    a = Authorized.from_json(SHAPE_A)
    assert (a.action, a.status, a.id, a.shape, a.authorized) == (
        "show_account_balance_public",
        "authorized",
        7,
        "A",
        True,
    )
    b = Authorized.from_json(SHAPE_B)
    assert (b.action, b.shape, b.id) == ("transfer_funds", "B", None)


@pytest.mark.parametrize(
    "variant",
    [
        {**SHAPE_A, "id": "5d3c8f0e-uuid"},
        {**SHAPE_A, "optional_actions": {"notify": True}},
        {**SHAPE_A, "action": {**SHAPE_A["action"], "response": "ok"}},
    ],
)
def test_provider_variants_parse(variant: dict[str, Any]) -> None:
    outcome = Authorized.from_json(variant)
    assert outcome.authorized
    assert outcome.raw is variant


def test_challenge_parses_with_type_inside_or_at_top() -> None:
    challenge = ChallengeRequired.from_json(CHALLENGE)
    assert challenge.challenge_id == CHALLENGE["challenge"]["id"]
    assert challenge.required_types == ("pin", "totp")
    only_inside = {"challenge": CHALLENGE["challenge"]}
    only_top = {
        "type": "srn:error:challenge_required",
        "challenge": {"id": 12, "required_types": ["pin"]},
    }
    assert is_challenge(only_inside) and is_challenge(only_top)
    assert ChallengeRequired.from_json(only_top).challenge_id == 12


@pytest.mark.parametrize("body", [None, {}, {"action": {}}, {"action": "x"}])
def test_unreadable_success_is_an_error(body: object) -> None:
    with pytest.raises(UnexpectedResponseError):
        Authorized.from_json(body)


def test_unreadable_challenge_is_an_error() -> None:
    with pytest.raises(UnexpectedResponseError, match="required_types"):
        ChallengeRequired.from_json({"challenge": {"id": 1, "required_types": "pin"}})
