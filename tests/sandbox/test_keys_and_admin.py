"""Discovery, rotation, the /sandbox/v1 endpoints, SandboxAdmin and the counters."""

from __future__ import annotations

import uuid

import pytest
import requests

from authzkit.sandbox import Sandbox, SandboxAdmin
from authzkit.sandbox.world import World
from authzkit.wire.errors import BadRequestError, TransportError

from support.sandbox_calls import KEYS, Caller, body

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth"}


def _keys(sandbox: Sandbox) -> list[dict[str, str]]:
    response = requests.get(sandbox.base_url + KEYS, timeout=5)
    assert response.status_code == 200
    return response.json()["keys"]


def test_discovery_publishes_a_sig_and_an_enc_key_without_private_parts(sandbox: Sandbox) -> None:
    keys = _keys(sandbox)
    assert [k["use"] for k in keys] == ["sig", "enc"]
    for key in keys:
        assert key["kty"] == "RSA"
        assert uuid.UUID(key["kid"])
        assert not PRIVATE_MEMBERS & set(key)
    assert keys[1]["alg"] == "RSA-OAEP-256"
    assert sandbox.stats()["keys_served"] == 1


def test_rotation_publishes_only_the_new_enc_key_and_keeps_the_sig_key(sandbox: Sandbox) -> None:
    before = _keys(sandbox)
    new_kid = SandboxAdmin(sandbox.base_url).rotate_keys()
    after = _keys(sandbox)
    assert after[0] == before[0]
    assert after[1]["kid"] == new_kid != before[1]["kid"]
    assert before[1]["kid"] not in {k["kid"] for k in after}
    # tokens signed before the rotation still verify
    assert (
        Caller(sandbox)
        .authorize(body("show_account_balance_public", sandbox.session_token("alice")))
        .status_code
        == 200
    )


def test_admin_reads_the_world(sandbox: Sandbox, world: World) -> None:
    served = SandboxAdmin(sandbox.base_url).world()
    assert served == sandbox.world.to_json()
    # The default world, with the demo client's key pair made at start in place of the
    # generate_key flag: its public JWK and, it being a sandbox, the private key too.
    demo = served["clients"][0]
    assert demo["client_key_pem"] == sandbox.client_key_pem
    assert demo["public_key"]["kty"] == "RSA" and "d" not in demo["public_key"]
    expected = world.to_json()
    del expected["clients"][0]["generate_key"], demo["client_key_pem"], demo["public_key"]
    assert served == expected


def test_admin_mints_session_tokens_with_a_ttl(sandbox: Sandbox) -> None:
    admin = SandboxAdmin(sandbox.base_url + "/")
    token = admin.session_token("bob", ttl=30)
    response = requests.post(
        sandbox.base_url + "/sandbox/v1/sessions", json={"subject": "bob"}, timeout=5
    )
    assert response.json()["expires_in"] == sandbox.token_ttl
    caller = Caller(sandbox)
    account = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"
    assert (
        caller.authorize(
            body("show_account_balance_public", token, resource_id=account)
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"subject": "mallory"}, "request_body.subject"),
        ({}, "request_body.subject"),
        ({"subject": "bob", "ttl": -1}, "request_body.ttl"),
        ({"subject": "bob", "ttl": "5"}, "request_body.ttl"),
    ],
)
def test_sessions_refuse_unknown_subjects_and_bad_ttls(
    sandbox: Sandbox, payload: dict[str, object], field: str
) -> None:
    response = requests.post(sandbox.base_url + "/sandbox/v1/sessions", json=payload, timeout=5)
    assert response.status_code == 400
    assert response.json()["field"] == field
    with pytest.raises(BadRequestError):
        SandboxAdmin(sandbox.base_url).session_token("mallory")


def test_stats_count_every_issuance_and_reset_clears_them(sandbox: Sandbox) -> None:
    admin = SandboxAdmin(sandbox.base_url)
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    caller.authorize(body("transfer_funds", token))
    caller.enc_key()
    stats = admin.stats()
    assert stats == sandbox.stats()
    assert stats == {
        "tokens_issued": 1,
        "keys_served": 1,
        "challenges_issued": 1,
        "authorize": {"srn:error:challenge_required": 1},
    }
    sandbox.reset()
    assert admin.stats() == {
        "tokens_issued": 0,
        "keys_served": 0,
        "challenges_issued": 0,
        "authorize": {},
    }


def test_reset_forgets_open_challenges(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    sandbox.reset()
    response = caller.authorize(body("transfer_funds", token, solution=solution))
    assert response.json()["type"] == "srn:error:challenge_not_found"


def test_admin_translates_a_dead_sandbox_into_a_transport_error() -> None:
    with pytest.raises(TransportError):
        SandboxAdmin("http://127.0.0.1:9", timeout=1).stats()


def test_the_openapi_document_is_served(sandbox: Sandbox) -> None:
    response = requests.get(sandbox.base_url + "/openapi.json", timeout=5)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "/resources/v1/authorization/actions/authorize" in response.json()["paths"]
