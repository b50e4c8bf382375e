"""``Sandbox(dialect="published")``: the same world and logic, answering as the provider
documents it (docs/dialects.md).

Authorize bodies (``"nil"``, UUID ids, challenge variant 1, the bare 401), ``x-request-id`` on
every response, the demo client's key pair, and worlds whose clients register public keys.
The OIDC token endpoint has its own module (``test_published_token.py``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World, WorldError
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import ConfigError

from support.sandbox_calls import (
    ALICE_ACCOUNT,
    AUTHORIZE,
    BOB_ACCOUNT,
    KEYS,
    OIDC_CONFIGURATION,
    OIDC_TOKEN,
    TOKENS,
    assertion,
    assertion_form,
    body,
    oidc_token,
    published_access_token,
)
from support.sandboxes import PUBLISHED_TOKEN_TTL

PLAIN = "show_account_balance_public"
UNAUTHENTICATED = {"type": "srn:error:unauthenticated"}


class PublishedCaller:
    """A resource server of the published sandbox: its access token from the issuer."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.http = requests.Session()
        self.access_token = published_access_token(sandbox)

    def authorize(self, payload: Any, *, bearer: str | None = "default") -> requests.Response:
        headers = (
            {}
            if bearer is None
            else {"Authorization": f"Bearer {self.access_token if bearer == 'default' else bearer}"}
        )
        if isinstance(payload, bytes):
            headers["Content-Type"] = "application/json"
            return self.http.post(
                self.sandbox.base_url + AUTHORIZE, data=payload, headers=headers, timeout=10
            )
        return self.http.post(
            self.sandbox.base_url + AUTHORIZE, json=payload, headers=headers, timeout=10
        )

    def solution(self, payload: dict[str, Any]) -> str:
        keys = self.http.get(self.sandbox.base_url + KEYS, timeout=10).json()["keys"]
        key = jwe.PublicKey.from_jwk(next(k for k in keys if k["use"] == "enc"))
        return jwe.encrypt(key, payload)


@pytest.fixture
def published_caller(published_sandbox: Sandbox) -> PublishedCaller:
    return PublishedCaller(published_sandbox)


def _request_id(response: requests.Response) -> str:
    value = response.headers["x-request-id"]
    assert str(uuid.UUID(value)) == value
    return value


def _published_error(response: requests.Response, status: int, type_: str) -> None:
    """``{"challenge": "nil", "details": {"error"}, "id": <x-request-id>, "type"}``, keys
    sorted as the provider writes them."""
    assert response.status_code == status, response.text
    assert response.json() == {
        "challenge": "nil",
        "details": {"error": type_.removeprefix("srn:error:")},
        "id": _request_id(response),
        "type": type_,
    }
    assert list(json.loads(response.content)) == ["challenge", "details", "id", "type"]


# ------------------------------------------------------------------ construction
def test_a_dialect_is_draft_published_or_authzen() -> None:
    with pytest.raises(
        ConfigError, match="dialect must be one of draft, published, authzen, got 'x'"
    ):
        Sandbox(dialect="x")
    assert Sandbox().dialect == "draft"


def test_the_published_sandbox_is_safe_to_print(published_sandbox: Sandbox) -> None:
    shown = (
        repr(published_sandbox)
        + str(published_sandbox)
        + repr(published_sandbox.world)
        + repr(list(published_sandbox.world.clients.values()))
    )
    assert "dialect='published'" in repr(published_sandbox)
    for secret in (published_sandbox.client_secret or "", published_sandbox.client_key_pem or ""):
        assert secret and secret not in shown
    assert "PRIVATE KEY" not in shown


# ------------------------------------------------------------------ authorize
def test_authorized_has_a_uuid_id_and_response_nil(
    published_sandbox: Sandbox, published_caller: PublishedCaller
) -> None:
    token = published_sandbox.session_token("alice")
    first, second = (published_caller.authorize(body(PLAIN, token)) for _ in range(2))
    assert first.status_code == 200, first.text
    data = first.json()
    assert data == {
        "action": {"name": PLAIN, "response": "nil", "status": "authorized"},
        "id": data["id"],
        "optional_actions": [],
    }
    assert list(json.loads(first.content)) == ["action", "id", "optional_actions"]
    assert uuid.UUID(data["id"]) and data["id"] != second.json()["id"]
    assert data["id"] != _request_id(first)  # an authorization has its own id


def test_challenge_is_variant_1_and_its_solution_gets_the_same_200_shape(
    published_sandbox: Sandbox, published_caller: PublishedCaller
) -> None:
    token = published_sandbox.session_token("alice")
    challenged = published_caller.authorize(body("add_payee", token))
    assert challenged.status_code == 403
    data = challenged.json()
    assert data == {
        "challenge": {"id": data["challenge"]["id"], "required_types": ["pin", "totp"]},
        "details": {"error": "challenge_required"},
        "id": _request_id(challenged),
        "type": "srn:error:challenge_required",
    }
    solution = published_caller.solution({"challenge_id": data["challenge"]["id"], "pin": "1234"})
    solved = published_caller.authorize(body("add_payee", token, solution=solution))
    assert solved.status_code == 200, solved.text
    assert solved.json()["action"] == {
        "name": "add_payee",
        "response": "nil",
        "status": "authorized",
    }
    assert uuid.UUID(solved.json()["id"]) and solved.json()["optional_actions"] == []


@pytest.mark.parametrize(
    ("solution", "type_"),
    [
        ("not.a.jwe", "srn:error:bad_jwe_token"),
        ({"challenge_id": None, "pin": "1234"}, "srn:error:wrong_challenge_solution"),
        ({"pin": "0000"}, "srn:error:bad_challenge_solution"),
        ({"challenge_id": "no-such-challenge", "pin": "1234"}, "srn:error:challenge_not_found"),
    ],
)
def test_challenge_solution_errors_in_the_published_shape(
    published_sandbox: Sandbox, published_caller: PublishedCaller, solution: Any, type_: str
) -> None:
    token = published_sandbox.session_token("alice")
    challenge_id = published_caller.authorize(body("transfer_funds", token)).json()["challenge"][
        "id"
    ]
    if isinstance(solution, dict):
        payload = {"challenge_id": challenge_id, **solution}
        solution = published_caller.solution({k: v for k, v in payload.items() if v is not None})
    _published_error(
        published_caller.authorize(body("transfer_funds", token, solution=solution)), 403, type_
    )


def test_unauthorized_in_the_published_shape(
    published_sandbox: Sandbox, published_caller: PublishedCaller
) -> None:
    response = published_caller.authorize(
        body(PLAIN, published_sandbox.session_token("alice"), resource_id=BOB_ACCOUNT)
    )
    _published_error(response, 403, "srn:error:unauthorized")


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[]",
        b"{}",
        json.dumps(
            {
                "action": {
                    "context": {
                        "resource_id": ALICE_ACCOUNT,
                        "resource_type": "srn:resource:account",
                    }
                },
                "subject": {"token": "x"},
            }
        ).encode(),
    ],
)
def test_a_malformed_body_is_403_bad_authorize_request(
    published_sandbox: Sandbox, published_caller: PublishedCaller, payload: bytes
) -> None:
    _published_error(published_caller.authorize(payload), 403, "srn:error:bad_authorize_request")
    assert published_sandbox.stats()["authorize"] == {"srn:error:bad_authorize_request": 1}


def test_an_oversized_body_is_413_in_the_published_shape(published_caller: PublishedCaller) -> None:
    _published_error(
        published_caller.authorize(b" " * (65 * 1024)), 413, "srn:error:payload_too_large"
    )


# ------------------------------------------------------------------ the bare 401
def _expired_access_token(published_sandbox: Sandbox, clock: ManualClock) -> str:
    token = published_access_token(published_sandbox)
    clock.advance(PUBLISHED_TOKEN_TTL)
    return token


@pytest.mark.parametrize(
    "case",
    [
        "no access token",
        "not a bearer",
        "forged access token",
        "expired access token",
        "forged session",
        "expired session",
        "unknown subject session",
    ],
)
def test_every_401_is_exactly_type_unauthenticated(
    published_sandbox: Sandbox, published_clock: ManualClock, case: str
) -> None:
    published_caller = PublishedCaller(published_sandbox)
    session = published_sandbox.session_token("alice", ttl=PUBLISHED_TOKEN_TTL * 2)
    headers: dict[str, str] = {}
    if case == "no access token":
        response = published_caller.authorize(body(PLAIN, session), bearer=None)
    elif case == "not a bearer":
        headers = {"Authorization": f"Basic {published_caller.access_token}"}
        response = requests.post(
            published_sandbox.base_url + AUTHORIZE,
            json=body(PLAIN, session),
            headers=headers,
            timeout=10,
        )
    elif case == "forged access token":
        response = published_caller.authorize(
            body(PLAIN, session), bearer=assertion(published_sandbox)
        )
    elif case == "expired access token":
        expired = _expired_access_token(published_sandbox, published_clock)
        response = published_caller.authorize(body(PLAIN, session), bearer=expired)
    elif case == "forged session":
        response = published_caller.authorize(
            body(PLAIN, published_caller.access_token)
        )  # an access token
    elif case == "expired session":
        published_clock.advance(PUBLISHED_TOKEN_TTL * 2)
        published_caller.access_token = published_access_token(published_sandbox)
        response = published_caller.authorize(body(PLAIN, session))
    else:
        response = published_caller.authorize(body(PLAIN, "not-a-session-token"))
    assert response.status_code == 401
    assert response.content == b'{"type":"srn:error:unauthenticated"}'
    assert "www-authenticate" not in response.headers
    _request_id(response)


def test_the_stats_keep_the_two_401s_apart(
    published_sandbox: Sandbox, published_caller: PublishedCaller
) -> None:
    """Same body on the wire; the sandbox's own counters still say which it was."""
    session = published_sandbox.session_token("alice")
    assert (
        published_caller.authorize(body(PLAIN, session), bearer="forged").json() == UNAUTHENTICATED
    )
    assert published_caller.authorize(body(PLAIN, "bad-session")).json() == UNAUTHENTICATED
    assert published_sandbox.stats()["authorize"] == {
        "srn:error:invalid_token": 1,
        "srn:error:unauthenticated": 1,
    }


# ------------------------------------------------------------------ x-request-id
@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", AUTHORIZE, {"json": {}}),
        ("GET", KEYS, {}),
        ("GET", OIDC_CONFIGURATION, {}),
        ("POST", OIDC_TOKEN, {"data": {"grant_type": "client_credentials"}}),
        ("GET", OIDC_TOKEN, {}),
        ("POST", TOKENS, {"json": {}}),
        ("GET", "/openapi.json", {}),
        ("GET", "/sandbox/v1/world", {}),
        ("GET", "/sandbox/v1/stats", {}),
        ("POST", "/sandbox/v1/sessions", {"json": {"subject": "nobody"}}),
        ("GET", "/no/such/path", {}),
    ],
)
def test_every_response_of_every_endpoint_has_an_x_request_id(
    published_sandbox: Sandbox, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    with requests.Session() as http:
        ids = {
            _request_id(
                http.request(method, published_sandbox.base_url + path, timeout=10, **kwargs)
            )
            for _ in range(2)
        }
    assert len(ids) == 2


def test_routing_errors_are_in_the_published_shape(published_sandbox: Sandbox) -> None:
    _published_error(
        requests.get(published_sandbox.base_url + "/no/such/path", timeout=10),
        404,
        "srn:error:not_found",
    )
    wrong_method = requests.get(published_sandbox.base_url + OIDC_TOKEN, timeout=10)
    _published_error(wrong_method, 405, "srn:error:method_not_allowed")
    assert wrong_method.headers["allow"] == "POST"


def test_the_draft_has_no_x_request_id_and_its_bodies_unchanged(sandbox: Sandbox) -> None:
    response = requests.get(sandbox.base_url + KEYS, timeout=10)
    assert "x-request-id" not in response.headers
    shown = requests.post(sandbox.base_url + AUTHORIZE, json={}, timeout=10)
    assert shown.json()["type"] == "srn:error:invalid_token" and "id" not in shown.json()


# ------------------------------------------------------------------ keys and worlds
def test_the_demo_client_has_a_key_pair_exposed_like_its_secret(published_sandbox: Sandbox) -> None:
    pem = published_sandbox.client_key_pem
    assert pem is not None and pem.startswith("-----BEGIN PRIVATE KEY-----")
    served = requests.get(published_sandbox.base_url + "/sandbox/v1/world", timeout=10).json()
    demo = next(c for c in served["clients"] if c["client_id"] == published_sandbox.client_id)
    assert demo["client_key_pem"] == pem
    assert demo["client_secret"] == published_sandbox.client_secret
    key = jwe.ClientKey.load(pem)
    assert {k: demo["public_key"][k] for k in ("n", "e")} == {
        k: key.public_jwk()[k] for k in ("n", "e")
    }
    assert "d" not in demo["public_key"]


def test_the_demo_key_is_made_at_start() -> None:
    with pytest.raises(ConfigError, match="made at start"):
        _ = Sandbox(dialect="published").client_key_pem


def _key_only_world(public_key: Any) -> dict[str, Any]:
    world = World.default().to_json()
    world["clients"] = [
        {"client_id": "key-only", "resource_server": True, "public_key": public_key}
    ]
    return world


@pytest.mark.parametrize("form", ["jwk", "pem"])
def test_a_client_may_register_only_a_public_key(form: str) -> None:
    pair = jwe.KeyPair.generate(use="sig", size=2048)
    signer = jwe.ClientKey.load(pair.private_pem())
    public: Any = pair.public_jwk() if form == "jwk" else _public_pem(pair)
    with Sandbox(
        world=_key_only_world(public), dialect="published", key_size=2048, clock=ManualClock()
    ) as sandbox:
        assert (sandbox.client_id, sandbox.client_secret, sandbox.client_key_pem) == (
            "key-only",
            None,
            None,
        )
        served = requests.get(sandbox.base_url + "/sandbox/v1/world", timeout=10).json()
        assert set(served["clients"][0]) == {"client_id", "resource_server", "public_key"}
        response = oidc_token(sandbox, data=assertion_form(sandbox, assertion(sandbox, signer)))
        assert response.status_code == 200, response.text
        secret_post = oidc_token(
            sandbox,
            data={
                "grant_type": "client_credentials",
                "client_id": "key-only",
                "client_secret": "x",
            },
        )
        assert secret_post.status_code == 400  # it has no secret to match


def _public_pem(pair: jwe.KeyPair) -> str:
    from cryptography.hazmat.primitives import serialization

    return (
        pair._private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.mark.parametrize(
    ("client", "message"),
    [
        (
            {"client_id": "c"},
            "clients[0].client_secret: expected a non-empty string (missing; or "
            "give the client a public_key, or generate_key = true)",
        ),
        (
            {"client_id": "c", "public_key": "not a key"},
            "clients[0].public_key: not an RSA public key in PEM or JWK form",
        ),
        (
            {"client_id": "c", "public_key": 7},
            "clients[0].public_key: expected a JWK object or a PEM string",
        ),
        (
            {"client_id": "c", "public_key": {"kty": "EC", "crv": "P-256", "x": "x", "y": "y"}},
            "clients[0].public_key",
        ),
        (
            {"client_id": "c", "public_key": {"kty": "RSA", "n": "AQAB", "e": "AQAB", "d": "AQAB"}},
            "clients[0].public_key: holds a private key",
        ),
        (
            {"client_id": "c", "client_key_pem": "-----BEGIN PRIVATE KEY-----\nnope\n"},
            "clients[0].client_key_pem: not an RSA private key",
        ),
        (
            {"client_id": "c", "generate_key": "yes"},
            "clients[0].generate_key: expected true or false",
        ),
    ],
)
def test_bad_client_keys_name_the_entry(client: dict[str, Any], message: str) -> None:
    world = World.default().to_json()
    world["clients"] = [{**client, "resource_server": True}]
    with pytest.raises(WorldError) as raised:
        World.from_json(world)
    assert message in str(raised.value)
    assert "nope" not in str(raised.value)


def test_a_served_world_reads_back_with_its_keys(published_sandbox: Sandbox) -> None:
    served = requests.get(published_sandbox.base_url + "/sandbox/v1/world", timeout=10).json()
    again = World.from_json(served)  # what it says of itself beside the world is no error
    identity = served.pop("authzkit_sandbox")
    assert (identity["dialect"], identity["issuer"]) == ("published", published_sandbox.issuer)
    assert again.to_json() == served
    assert again.resource_server().client_key_pem == published_sandbox.client_key_pem
    mismatched = json.loads(json.dumps(served))
    mismatched["clients"][0]["public_key"] = jwe.KeyPair.generate(use="sig", size=2048).public_jwk()
    with pytest.raises(WorldError, match=r"clients\[0\].public_key: does not match"):
        World.from_json(mismatched)
