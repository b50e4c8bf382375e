"""The sandbox answers every SPEC endpoint over real HTTP (the first thing anyone runs)."""

from __future__ import annotations

from authzkit.sandbox import Sandbox

from support.sandbox_calls import ALICE_ACCOUNT, Caller, body


def test_plain_action_is_authorized_with_shape_a(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    response = caller.authorize(body("show_account_balance_public", sandbox.session_token("alice")))
    assert response.status_code == 200
    data = response.json()
    assert data["action"] == {
        "name": "show_account_balance_public",
        "response": None,
        "status": "authorized",
    }
    assert isinstance(data["id"], int)
    assert data["optional_actions"] == []


def test_pin_challenge_round_trip_ends_in_shape_b(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    first = caller.authorize(body("transfer_funds", token))
    assert first.status_code == 403
    challenge = first.json()["challenge"]
    assert challenge["required_types"] == ["pin"]
    assert challenge["type"] == "srn:error:challenge_required"
    assert challenge["details"] == {"error": "challenge_required"}
    solution = caller.solution({"challenge_id": challenge["id"], "pin": "1234"})
    second = caller.authorize(
        body("transfer_funds", token, resource_id=ALICE_ACCOUNT, solution=solution)
    )
    assert second.status_code == 200
    assert second.json() == {
        "action": {"name": "transfer_funds", "status": "authorized", "optional_actions": []}
    }
