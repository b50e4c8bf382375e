"""Every row of SPEC "Outcomes" and every refusal of the caller, over real HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.decisions import Refusal, Service
from authzkit.sandbox.keys import KeyRing
from authzkit.sandbox.validation import parse_authorize
from authzkit.sandbox.world import World
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock

from support.sandbox_calls import ACCOUNT, ALICE_ACCOUNT, BOB_ACCOUNT, Caller, body

PLAIN = "show_account_balance_public"


@pytest.fixture(scope="module")
def key_ring() -> KeyRing:
    return KeyRing(size=2048)


@pytest.fixture
def service_at(key_ring: KeyRing) -> Callable[[float], tuple[Service, ManualClock]]:
    """A sandbox service (no HTTP) whose clock starts at the given time, 4 s tokens."""

    def build(start: float) -> tuple[Service, ManualClock]:
        clock = ManualClock(start)
        return Service(
            world=World.default(),
            keys=key_ring,
            clock=clock,
            token_ttl=4,
            challenge_ttl=300,
            max_attempts=3,
        ), clock

    return build


def test_ids_of_plain_authorizations_are_distinct_integers(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    ids = {caller.authorize(body(PLAIN, token)).json()["id"] for _ in range(3)}
    assert len(ids) == 3 and all(isinstance(i, int) for i in ids)


@pytest.mark.parametrize(
    ("action", "required"),
    [
        ("transfer_funds", ["pin"]),
        ("change_contact_details", ["login_password"]),
        ("close_account", ["totp"]),
        ("add_payee", ["pin", "totp"]),
    ],
)
def test_each_challenge_action_demands_its_kinds(
    sandbox: Sandbox, action: str, required: list[str]
) -> None:
    response = Caller(sandbox).authorize(body(action, sandbox.session_token("alice")))
    assert response.status_code == 403
    data = response.json()
    assert data["type"] == "srn:error:challenge_required"
    assert set(data["challenge"]) == {"id", "required_types", "type", "details"}
    assert data["challenge"]["required_types"] == required
    assert sandbox.stats()["challenges_issued"] == 1


@pytest.mark.parametrize(
    ("resource_id", "resource_type"),
    [
        (BOB_ACCOUNT, ACCOUNT),  # someone else's resource
        ("00000000-0000-4000-8000-000000000000", ACCOUNT),  # nobody's resource
        (ALICE_ACCOUNT, "srn:resource:card"),  # right id, wrong type
    ],
)
def test_a_subject_acts_only_on_what_it_owns(
    sandbox: Sandbox, resource_id: str, resource_type: str
) -> None:
    response = Caller(sandbox).authorize(
        body(
            PLAIN,
            sandbox.session_token("alice"),
            resource_id=resource_id,
            resource_type=resource_type,
        )
    )
    assert response.status_code == 403
    assert response.json()["type"] == "srn:error:unauthorized"
    assert "field" not in response.json()


def test_a_challenge_action_on_a_foreign_resource_is_unauthorized_not_challenged(
    sandbox: Sandbox,
) -> None:
    response = Caller(sandbox).authorize(body("transfer_funds", sandbox.session_token("bob")))
    assert response.json()["type"] == "srn:error:unauthorized"
    assert sandbox.stats()["challenges_issued"] == 0


def test_an_unknown_action_is_unauthorized(sandbox: Sandbox) -> None:
    response = Caller(sandbox).authorize(body("launch_rocket", sandbox.session_token("alice")))
    assert (response.status_code, response.json()["type"]) == (403, "srn:error:unauthorized")


def _unauthenticated(caller: Caller, token: str) -> None:
    response = caller.authorize(body(PLAIN, token))
    assert response.status_code == 401
    assert response.json()["type"] == "srn:error:unauthenticated"
    assert response.json()["field"] == "request_body.subject.token"
    # The resource server's access token was fine: no bearer challenge (RFC 6750).
    assert "WWW-Authenticate" not in response.headers


def test_a_forged_session_token_is_unauthenticated(sandbox: Sandbox) -> None:
    forger = jwe.KeyPair.generate(use="sig", size=2048)
    token = sandbox.session_token("alice")
    header, claims, _ = token.split(".")
    forged = jwe.sign_jwt({"sub": "alice", "typ": "session", "exp": 4_000_000_000}, forger)
    caller = Caller(sandbox)
    _unauthenticated(caller, forged)
    _unauthenticated(caller, f"{header}.{claims}.{'A' * 40}")
    _unauthenticated(caller, "not-a-jwt")


def test_an_expired_session_token_is_unauthenticated(sandbox: Sandbox, clock: ManualClock) -> None:
    caller = Caller(sandbox)
    token = sandbox.session_token("alice", ttl=60)
    assert caller.authorize(body(PLAIN, token)).status_code == 200
    clock.advance(61)
    _unauthenticated(caller, token)


def test_an_access_token_is_not_a_session_token(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    _unauthenticated(caller, caller.access_token)


def _invalid_token(response: requests.Response) -> None:
    assert response.status_code == 401
    assert response.json()["type"] == "srn:error:invalid_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header",
    [None, "", "Basic abc", "Bearer", "Bearer not.a.jwt", "Bearer eyJhbGciOiJub25lIn0.e30."],
)
def test_missing_or_malformed_access_tokens_get_401(sandbox: Sandbox, header: str | None) -> None:
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    url = caller.url("/resources/v1/authorization/actions/authorize")
    headers = {} if header is None else {"Authorization": header}
    _invalid_token(caller.http.post(url, json=body(PLAIN, token), headers=headers))


def test_a_session_token_is_not_an_access_token(sandbox: Sandbox) -> None:
    token = sandbox.session_token("alice")
    _invalid_token(Caller(sandbox).authorize(body(PLAIN, token), access_token=token))


def test_an_expired_access_token_gets_401_and_a_new_one_works(
    sandbox: Sandbox, clock: ManualClock
) -> None:
    caller = Caller(sandbox)
    old = caller.access_token
    clock.advance(sandbox.token_ttl + 1)
    token = sandbox.session_token("alice")
    _invalid_token(caller.authorize(body(PLAIN, token), access_token=old))
    caller._access_token = None
    assert caller.authorize(body(PLAIN, token)).status_code == 200


def test_a_client_without_the_resource_server_flag_gets_403(sandbox: Sandbox) -> None:
    frontend = Caller(
        sandbox, client_id="authzkit-frontend", client_secret="sandbox-frontend-secret"
    )
    response = frontend.authorize(body(PLAIN, sandbox.session_token("alice")))
    assert response.status_code == 403
    assert response.json()["type"] == "srn:error:not_resource_server"


def test_the_token_endpoint_follows_spec(sandbox: Sandbox) -> None:
    response = Caller(sandbox).token_response(sandbox.client_id, sandbox.client_secret)
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {"accessToken", "expiresIn", "tokenType"}
    assert data["expiresIn"] == sandbox.token_ttl and data["tokenType"] == "Bearer"
    header = jwe.protected_header(data["accessToken"])
    segment = data["accessToken"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    assert header["alg"] == "RS256"
    assert claims["sub"] == sandbox.client_id and claims["typ"] == "access"
    # whole seconds, exp rounded up: the token lives at least expiresIn seconds
    assert claims["exp"] - claims["iat"] in (sandbox.token_ttl, sandbox.token_ttl + 1)
    assert claims["jti"]
    assert sandbox.stats()["tokens_issued"] == 1


@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.5, 0.999])
@pytest.mark.parametrize("kind", ["access", "session"])
def test_a_token_lives_its_whole_expires_in_whatever_the_fraction_of_a_second(
    service_at: Callable[[float], tuple[Service, ManualClock]], fraction: float, kind: str
) -> None:
    """Regression: ``exp`` was ``int(now) + ttl``, up to a second short of ``expiresIn``.

    A 4 s token is refreshed 1 s ahead of expiry, so that lost second was the client's whole
    margin: under load a call sent just before the refresh point met an expired token (401).
    """
    service, clock = service_at(1_800_000_000 + fraction)
    check: Callable[[], object]
    if kind == "access":
        token, lifetime = service.issue_access_token("authzkit-demo", "sandbox-demo-secret")
        check = lambda: service.resource_server(f"Bearer {token}")  # noqa: E731
    else:
        token, lifetime = service.mint_session("alice", ttl=4)
        check = lambda: service.authorize(  # noqa: E731
            parse_authorize(body(PLAIN, token))
        )
    clock.advance(lifetime - 0.001)  # the last moment the promise covers
    check()
    clock.advance(1.002)  # a second later at the latest, it is gone
    with pytest.raises(Refusal):
        check()


@pytest.mark.parametrize(
    ("client_id", "client_secret"),
    [
        ("authzkit-demo", "wrong"),
        ("nobody", "sandbox-demo-secret"),
        ("authzkit-demo", "sandbox-frontend-secret"),
    ],
)
def test_wrong_client_credentials_get_401_invalid_client(
    sandbox: Sandbox, client_id: str, client_secret: str
) -> None:
    response = Caller(sandbox).token_response(client_id, client_secret)
    assert response.status_code == 401
    assert response.json()["type"] == "srn:error:invalid_client"
    assert "WWW-Authenticate" not in response.headers  # not a bearer token failure
    assert client_secret not in response.text


def test_the_providers_extra_body_fields_are_accepted(sandbox: Sandbox) -> None:
    payload = body(PLAIN, sandbox.session_token("alice"))
    payload["subject"]["type"] = "user"
    payload["optional_actions"] = []
    payload["context"] = {"channel": "web"}
    assert Caller(sandbox).authorize(payload).status_code == 200


def test_subject_context_and_top_context_are_optional(sandbox: Sandbox) -> None:
    payload = body(PLAIN, sandbox.session_token("alice"))
    del payload["subject"]["context"], payload["context"]
    assert Caller(sandbox).authorize(payload).status_code == 200


def test_outcomes_are_counted_by_type(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    caller.authorize(body(PLAIN, token))
    caller.authorize(body("transfer_funds", token))
    caller.authorize(body(PLAIN, token, resource_id=BOB_ACCOUNT))
    assert sandbox.stats()["authorize"] == {
        "authorized": 1,
        "srn:error:challenge_required": 1,
        "srn:error:unauthorized": 1,
    }
