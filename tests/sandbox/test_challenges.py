"""Challenge solutions: every SPEC challenge error, single use, binding, attempts, expiry."""

from __future__ import annotations

import base64
import json

import pyotp
import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock

from support.sandbox_calls import ALICE_ACCOUNT, Caller, body

ALICE_SECOND_ACCOUNT = "8d2a4b7e-1f6c-4e2d-b8a9-6c5e4d3b2a22"


def _type(response: requests.Response) -> str:
    return str(response.json()["type"])


def _alice(world: World) -> dict[str, str]:
    return dict(world.subjects["alice"].credentials)


@pytest.mark.parametrize(
    ("action", "kind"),
    [("transfer_funds", "pin"), ("change_contact_details", "login_password"), ("add_payee", "pin")],
)
def test_the_right_credential_solves_the_challenge(
    sandbox: Sandbox, world: World, action: str, kind: str
) -> None:
    response = Caller(sandbox).solve(action, {kind: _alice(world)[kind]})
    assert response.status_code == 200
    assert response.json() == {
        "action": {"name": action, "status": "authorized", "optional_actions": []}
    }


@pytest.mark.parametrize("step", [-1, 0, 1])
def test_totp_is_accepted_one_step_either_side(
    sandbox: Sandbox, world: World, clock: ManualClock, step: int
) -> None:
    clock.advance(-clock() % 30 + 1)  # a step just began: no boundary before both solves
    code = pyotp.TOTP(_alice(world)["totp"]).at(int(clock()) + 30 * step)
    for action in ("close_account", "add_payee"):
        assert Caller(sandbox).solve(action, {"totp": code}).status_code == 200


def test_a_totp_two_steps_away_is_wrong(sandbox: Sandbox, world: World, clock: ManualClock) -> None:
    code = pyotp.TOTP(_alice(world)["totp"]).at(int(clock()) - 90)
    response = Caller(sandbox).solve("close_account", {"totp": code})
    assert _type(response) == "srn:error:bad_challenge_solution"


@pytest.mark.parametrize("alg", jwe.KEY_ALGS)
def test_both_key_algorithms_are_accepted(sandbox: Sandbox, alg: str) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"}, alg=alg)
    assert caller.authorize(body("transfer_funds", token, solution=solution)).status_code == 200


def _solve_with(
    caller: Caller,
    token: str,
    solution: str,
    action: str = "transfer_funds",
    resource_id: str = ALICE_ACCOUNT,
) -> requests.Response:
    return caller.authorize(body(action, token, resource_id=resource_id, solution=solution))


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "garbage",
        "a.b.c.d.e",
        "....",
        "eyJhbGciOiJSU0EtT0FFUC0yNTYifQ.a.b.c.d",
        base64.urlsafe_b64encode(b'{"alg":"RSA1_5","enc":"A256GCM","kid":"x"}').decode()
        + ".AA.AA.AA.AA",
    ],
)
def test_garbage_is_a_bad_jwe_token(sandbox: Sandbox, garbage: str) -> None:
    caller = Caller(sandbox)
    _, token = caller.challenge("transfer_funds")
    response = _solve_with(caller, token, garbage)
    assert response.status_code == 403
    assert _type(response) == "srn:error:bad_jwe_token"
    assert response.json()["field"] == ("request_body.subject.context.challenge_solution")


def test_a_tampered_ciphertext_is_a_bad_jwe_token(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    parts = caller.solution({"challenge_id": challenge_id, "pin": "1234"}).split(".")
    parts[3] = base64.urlsafe_b64encode(b"x" * 40).decode().rstrip("=")
    assert _type(_solve_with(caller, token, ".".join(parts))) == "srn:error:bad_jwe_token"


def test_a_payload_that_is_not_an_object_is_a_bad_jwe_token(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    _, token = caller.challenge("transfer_funds")
    solution = jwe.encrypt(caller.enc_key(), ["not", "an", "object"])  # type: ignore[arg-type]
    assert _type(_solve_with(caller, token, solution)) == "srn:error:bad_jwe_token"


def test_a_foreign_key_is_unrecognized(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    stranger = jwe.KeyPair.generate(use="enc", size=2048)
    solution = jwe.encrypt(stranger.public_key(), {"challenge_id": challenge_id, "pin": "1234"})
    assert _type(_solve_with(caller, token, solution)) == "srn:error:unrecognized_key"
    # Same kid as ours, but the wrong key material: still "wrong key", not "garbage".
    impostor = jwe.KeyPair.generate(use="enc", size=2048, kid=caller.enc_key().kid)
    solution = jwe.encrypt(impostor.public_key(), {"challenge_id": challenge_id, "pin": "1234"})
    assert _type(_solve_with(caller, token, solution)) == "srn:error:unrecognized_key"


def test_after_rotation_the_old_kid_is_unrecognized_and_costs_no_attempt(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    old_key = caller.enc_key()
    new_kid = sandbox.rotate_keys()
    assert new_kid != old_key.kid and caller.enc_key().kid == new_kid
    stale = jwe.encrypt(old_key, {"challenge_id": challenge_id, "pin": "1234"})
    for _ in range(sandbox.max_attempts + 1):
        assert _type(_solve_with(caller, token, stale)) == "srn:error:unrecognized_key"
    fresh = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    assert _solve_with(caller, token, fresh).status_code == 200


@pytest.mark.parametrize(
    "payload",
    [{"pin": "1234"}, {"challenge_id": "", "pin": "1234"}, {"challenge_id": 7, "pin": "1234"}],
)
def test_a_solution_without_challenge_id_is_wrong(
    sandbox: Sandbox, payload: dict[str, object]
) -> None:
    caller = Caller(sandbox)
    _, token = caller.challenge("transfer_funds")
    solution = caller.solution(payload)
    assert _type(_solve_with(caller, token, solution)) == "srn:error:wrong_challenge_solution"


def test_an_unknown_challenge_id_is_not_found(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    _, token = caller.challenge("transfer_funds")
    solution = caller.solution(
        {"challenge_id": "00000000-0000-4000-8000-000000000000", "pin": "1234"}
    )
    assert _type(_solve_with(caller, token, solution)) == "srn:error:challenge_not_found"


def test_a_solved_challenge_cannot_be_replayed(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    assert _solve_with(caller, token, solution).status_code == 200
    assert _type(_solve_with(caller, token, solution)) == "srn:error:challenge_not_found"


def test_an_expired_challenge_is_not_found(sandbox: Sandbox, clock: ManualClock) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    clock.advance(sandbox.challenge_ttl + 1)
    token = sandbox.session_token("alice")  # the session itself is still fine
    assert _type(_solve_with(caller, token, solution)) == "srn:error:challenge_not_found"


def test_a_challenge_is_bound_to_subject_action_and_resource(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("add_payee")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    # another action, another resource of the same subject: not this challenge
    assert _type(_solve_with(caller, token, solution, action="transfer_funds")) == (
        "srn:error:challenge_not_found"
    )
    assert (
        _type(
            _solve_with(
                caller, token, solution, action="add_payee", resource_id=ALICE_SECOND_ACCOUNT
            )
        )
        == "srn:error:challenge_not_found"
    )
    # another subject (bob) on his own resource with alice's challenge
    bob_challenge, bob_token = caller.challenge(
        "add_payee", "bob", "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"
    )
    assert bob_challenge != challenge_id
    assert _type(
        _solve_with(
            caller,
            bob_token,
            solution,
            action="add_payee",
            resource_id="b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33",
        )
    ) == ("srn:error:challenge_not_found")
    # the binding did not use the challenge up
    assert _solve_with(caller, token, solution, action="add_payee").status_code == 200


@pytest.mark.parametrize(
    "answer", [{"pin": "0000"}, {"pin": 1234}, {"login_password": "x"}, {"totp": "123456"}, {}]
)
def test_a_wrong_answer_is_a_bad_challenge_solution(
    sandbox: Sandbox, answer: dict[str, object]
) -> None:
    response = Caller(sandbox).solve("transfer_funds", answer)
    assert (response.status_code, _type(response)) == (403, "srn:error:bad_challenge_solution")


def test_the_challenge_dies_after_max_attempts_wrong_answers(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    wrong = caller.solution({"challenge_id": challenge_id, "pin": "0000"})
    for _ in range(sandbox.max_attempts):
        assert _type(_solve_with(caller, token, wrong)) == "srn:error:bad_challenge_solution"
    right = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    assert _type(_solve_with(caller, token, right)) == "srn:error:challenge_not_found"


def test_fewer_wrong_answers_than_the_limit_still_allow_the_right_one(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    wrong = caller.solution({"challenge_id": challenge_id, "pin": "0000"})
    for _ in range(sandbox.max_attempts - 1):
        _solve_with(caller, token, wrong)
    right = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    assert _solve_with(caller, token, right).status_code == 200


def test_a_challenge_403_body_is_exactly_the_spec_object(sandbox: Sandbox) -> None:
    response = Caller(sandbox).authorize(body("transfer_funds", sandbox.session_token("alice")))
    data = response.json()
    challenge = data["challenge"]
    assert json.loads(json.dumps(challenge)) == {
        "id": challenge["id"],
        "required_types": ["pin"],
        "type": "srn:error:challenge_required",
        "details": {"error": "challenge_required"},
    }
    assert len(challenge["id"]) == 36
