"""The published dialect's OIDC issuer over real HTTP: its discovery document and its token
endpoint, with each client authentication and every refusal a client can meet."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote_plus, urlencode

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.state import UsedAssertions
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock

from support.sandbox_calls import (
    ASSERTION_TYPE,
    AUTHORIZE,
    OIDC_CONFIGURATION,
    OIDC_TOKEN,
    TOKENS,
    assertion,
    assertion_form,
    body,
    oidc_token,
)
from support.sandboxes import PUBLISHED_TOKEN_TTL

GRANT = {"grant_type": "client_credentials"}
TOKEN_KEYS = {
    "access_token",
    "expires_in",
    "refresh_expires_in",
    "token_type",
    "not-before-policy",
    "scope",
}


def _refused(response: requests.Response, status: int, error: str) -> str:
    """The error_description of an OAuth error answer (never an srn type, never a 5xx)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    found = response.json()
    assert set(found) == {"error", "error_description"} and found["error"] == error, found
    return str(found["error_description"])


def _authorizes(sandbox: Sandbox, access_token: str) -> bool:
    response = requests.post(
        sandbox.base_url + AUTHORIZE,
        timeout=10,
        json=body("show_account_balance_public", sandbox.session_token("alice")),
        headers={"Authorization": f"Bearer {access_token}"},
    )
    return response.status_code == 200


# ------------------------------------------------------------------ the issuer
def test_the_issuer_and_its_discovery_document(published_sandbox: Sandbox) -> None:
    assert published_sandbox.issuer == published_sandbox.base_url + "/auth/realms/authzkit"
    assert published_sandbox.token_url == published_sandbox.base_url + OIDC_TOKEN
    response = requests.get(published_sandbox.base_url + OIDC_CONFIGURATION, timeout=10)
    assert response.status_code == 200
    document = response.json()
    assert document["issuer"] == published_sandbox.issuer
    assert document["token_endpoint"] == published_sandbox.token_url
    assert document["grant_types_supported"] == ["client_credentials"]
    assert document["token_endpoint_auth_methods_supported"] == [
        "client_secret_post",
        "client_secret_basic",
        "client_secret_jwt",
        "private_key_jwt",
    ]
    keys = requests.get(document["jwks_uri"], timeout=10).json()["keys"]
    assert {key["use"] for key in keys} == {"sig", "enc"}


def test_the_document_names_the_host_the_client_used(published_sandbox: Sandbox) -> None:
    """Like Keycloak: reached as localhost, the issuer is under localhost (and an assertion
    for that issuer is accepted)."""
    localhost = published_sandbox.base_url.replace("127.0.0.1", "localhost")
    document = requests.get(localhost + OIDC_CONFIGURATION, timeout=10).json()
    assert document["issuer"] == localhost + "/auth/realms/authzkit"
    form = assertion_form(published_sandbox, aud=document["issuer"])
    assert requests.post(document["token_endpoint"], data=form, timeout=10).status_code == 200


def test_the_draft_sandbox_has_no_issuer(sandbox: Sandbox) -> None:
    assert sandbox.issuer is None
    assert sandbox.token_url == sandbox.base_url + TOKENS
    for path in (OIDC_CONFIGURATION, OIDC_TOKEN):
        response = requests.request(
            "GET" if path == OIDC_CONFIGURATION else "POST",
            sandbox.base_url + path,
            data=GRANT,
            timeout=10,
        )
        assert (response.status_code, response.json()["type"]) == (404, "srn:error:not_found")
        assert "x-request-id" not in response.headers


def test_the_draft_token_path_is_not_found_in_the_published_dialect(
    published_sandbox: Sandbox,
) -> None:
    response = requests.post(
        published_sandbox.base_url + TOKENS,
        timeout=10,
        json={
            "clientId": published_sandbox.client_id,
            "clientSecret": published_sandbox.client_secret,
        },
    )
    assert response.status_code == 404
    assert response.json()["type"] == "srn:error:not_found"
    assert published_sandbox.stats()["tokens_issued"] == 0


# ------------------------------------------------------------ private_key_jwt
def test_private_key_jwt_gets_a_keycloak_style_token(published_sandbox: Sandbox) -> None:
    response = oidc_token(published_sandbox, data=assertion_form(published_sandbox))
    assert response.status_code == 200, response.text
    token = response.json()
    assert set(token) == TOKEN_KEYS
    assert (token["expires_in"], token["token_type"]) == (PUBLISHED_TOKEN_TTL, "bearer")
    assert (token["refresh_expires_in"], token["not-before-policy"]) == (0, 0)
    assert isinstance(token["scope"], str)
    assert response.headers["cache-control"] == "no-store"
    assert _authorizes(published_sandbox, token["access_token"])


@pytest.mark.parametrize("audience", ["issuer", "token endpoint", "list"])
def test_aud_may_name_the_issuer_or_the_token_endpoint(
    published_sandbox: Sandbox, audience: str
) -> None:
    issuer = published_sandbox.issuer or ""
    aud = {
        "issuer": issuer,
        "token endpoint": published_sandbox.token_url,
        "list": ["https://elsewhere.example", published_sandbox.token_url],
    }[audience]
    form = assertion_form(published_sandbox, aud=aud)
    assert oidc_token(published_sandbox, data=form).status_code == 200


def test_aud_must_name_the_issuer_exactly(published_sandbox: Sandbox) -> None:
    # As a certified provider matches it: the issuer with a slash added is another string.
    form = assertion_form(published_sandbox, aud=(published_sandbox.issuer or "") + "/")
    response = oidc_token(published_sandbox, data=form)
    assert "aud must be the issuer" in _refused(response, 400, "invalid_client")


def test_client_id_in_the_form_is_optional_but_must_be_the_issuer(
    published_sandbox: Sandbox,
) -> None:
    form = {**assertion_form(published_sandbox), "client_id": published_sandbox.client_id}
    assert oidc_token(published_sandbox, data=form).status_code == 200
    form = {**assertion_form(published_sandbox), "client_id": "authzkit-frontend"}
    assert "client_id differs" in _refused(
        oidc_token(published_sandbox, data=form), 400, "invalid_client"
    )


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"aud": "https://elsewhere.example/auth/realms/authzkit"}, "aud must be the issuer"),
        ({"aud": None}, "aud must be the issuer"),
        ({"sub": "someone-else"}, "iss and sub"),
        ({"iss": None}, "iss and sub"),
        ({"iss": "nobody", "sub": "nobody"}, "no client with this id"),
        ({"iss": "authzkit-frontend", "sub": "authzkit-frontend"}, "no client with this id"),
        ({"exp": None}, "exp is missing"),
        ({"exp": "tomorrow"}, "exp is missing"),
        ({"exp": True}, "exp is missing"),
        ({"exp": 10**400}, "exp is missing"),
        ({"exp": float("inf")}, "exp is missing"),
        ({"jti": None}, "jti is missing"),
        ({"jti": ""}, "jti is missing"),
    ],
)
def test_each_claim_is_checked(
    published_sandbox: Sandbox, overrides: dict[str, Any], says: str
) -> None:
    response = oidc_token(published_sandbox, data=assertion_form(published_sandbox, **overrides))
    assert says in _refused(response, 400, "invalid_client")
    assert published_sandbox.stats()["tokens_issued"] == 0


def test_an_assertion_signed_by_another_key_is_refused(published_sandbox: Sandbox) -> None:
    other = jwe.ClientKey.load(jwe.KeyPair.generate(use="sig", size=2048).private_pem())
    form = assertion_form(published_sandbox, assertion(published_sandbox, other))
    response = oidc_token(published_sandbox, data=form)
    assert "signature does not verify" in _refused(response, 400, "invalid_client")


@pytest.mark.parametrize("header", [{"alg": "none"}, {"alg": "HS256"}, {"alg": "RS512"}])
def test_an_assertion_not_signed_rs256_is_refused(
    published_sandbox: Sandbox, header: dict[str, str]
) -> None:
    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    signed = assertion(published_sandbox).rsplit(".", 1)[1]
    client_id = published_sandbox.client_id
    compact = f"{part(header)}.{part(dict(iss=client_id, sub=client_id))}"
    form = assertion_form(published_sandbox, f"{compact}.{signed}")
    response = oidc_token(published_sandbox, data=form)
    assert "signature does not verify" in _refused(response, 400, "invalid_client")


def test_an_expired_assertion_is_refused_on_the_sandbox_clock(
    published_sandbox: Sandbox, published_clock: ManualClock
) -> None:
    form = assertion_form(published_sandbox, exp=int(published_sandbox.clock()) + 30)
    published_clock.advance(30)
    assert "expired" in _refused(oidc_token(published_sandbox, data=form), 400, "invalid_client")


def test_a_reused_jti_is_refused_with_400_invalid_client(published_sandbox: Sandbox) -> None:
    form = assertion_form(published_sandbox)
    assert oidc_token(published_sandbox, data=form).status_code == 200
    again = oidc_token(published_sandbox, data=form)
    assert "reuse" in _refused(again, 400, "invalid_client")
    # the same jti in a freshly signed assertion is a reuse too
    jti = json.loads(base64.urlsafe_b64decode(form["client_assertion"].split(".")[1] + "=="))
    reused = oidc_token(published_sandbox, data=assertion_form(published_sandbox, jti=jti["jti"]))
    assert "reuse" in _refused(reused, 400, "invalid_client")
    assert published_sandbox.stats()["tokens_issued"] == 1


def test_a_jti_is_remembered_until_its_assertion_expires_then_forgotten(
    published_sandbox: Sandbox, published_clock: ManualClock
) -> None:
    start = int(published_sandbox.clock())
    assert (
        oidc_token(
            published_sandbox, data=assertion_form(published_sandbox, jti="j-1", exp=start + 30)
        ).status_code
        == 200
    )
    published_clock.advance(29)
    reused = oidc_token(
        published_sandbox, data=assertion_form(published_sandbox, jti="j-1", exp=start + 90)
    )
    assert reused.status_code == 400  # still within the first assertion's lifetime
    published_clock.advance(1)  # the first assertion has expired: its jti may be forgotten
    again = oidc_token(
        published_sandbox, data=assertion_form(published_sandbox, jti="j-1", exp=start + 90)
    )
    assert again.status_code == 200, again.text


def test_used_assertion_ids_take_bounded_memory() -> None:
    clock = ManualClock(1000)
    used = UsedAssertions(clock=clock, capacity=3)
    for index in range(10):  # far-away expiry: only the cap bounds them
        assert used.first_use("c", f"j{index}", 10**9 + index)
        assert len(used) <= 3
    assert not used.first_use("c", "j9", 10**9)  # the latest are still remembered
    assert used.first_use("other-client", "j9", 2000)  # per client
    clock.advance(1000)
    assert used.first_use("c", "late", 3000) and len(used) == 3


# ------------------------------------------------------------ client secrets
def test_client_secret_post(published_sandbox: Sandbox) -> None:
    form = {
        **GRANT,
        "client_id": published_sandbox.client_id,
        "client_secret": published_sandbox.client_secret,
    }
    response = oidc_token(published_sandbox, data=form)
    assert response.status_code == 200
    assert _authorizes(published_sandbox, response.json()["access_token"])
    wrong = oidc_token(published_sandbox, data={**form, "client_secret": "not-the-secret"})
    assert _refused(wrong, 400, "unauthorized_client") == (
        "INVALID_CREDENTIALS: Invalid client credentials"
    )
    assert "not-the-secret" not in wrong.text


def test_client_secret_basic(published_sandbox: Sandbox) -> None:
    response = oidc_token(
        published_sandbox,
        data=GRANT,
        auth=(published_sandbox.client_id, published_sandbox.client_secret or ""),
    )
    assert response.status_code == 200, response.text
    wrong = oidc_token(published_sandbox, data=GRANT, auth=(published_sandbox.client_id, "nope"))
    _refused(wrong, 401, "invalid_client")
    assert wrong.headers["www-authenticate"] == 'Basic realm="authzkit"'


@pytest.mark.parametrize(
    "header",
    [
        "Basic",
        "Basic !!!",
        "Basic " + base64.b64encode(b"no-colon").decode(),
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(),
        "Basic " + base64.b64encode(b"authzkit-demo:%ff").decode(),
    ],
)
def test_malformed_basic_credentials_are_401(published_sandbox: Sandbox, header: str) -> None:
    response = oidc_token(published_sandbox, data=GRANT, headers={"Authorization": header})
    assert "malformed Basic" in _refused(response, 401, "invalid_client")


def test_the_client_without_the_flag_gets_a_token_but_no_decision(
    published_sandbox: Sandbox,
) -> None:
    frontend = published_sandbox.world.clients["authzkit-frontend"]
    response = oidc_token(
        published_sandbox,
        data={**GRANT, "client_id": frontend.client_id, "client_secret": frontend.client_secret},
    )
    assert response.status_code == 200
    refused = requests.post(
        published_sandbox.base_url + AUTHORIZE,
        timeout=10,
        json=body("show_account_balance_public", published_sandbox.session_token("alice")),
        headers={"Authorization": f"Bearer {response.json()['access_token']}"},
    )
    assert refused.status_code == 403
    assert refused.json()["type"] == "srn:error:not_resource_server"


def test_tokens_issued_counts_every_method(published_sandbox: Sandbox) -> None:
    secret = published_sandbox.client_secret or ""
    oidc_token(published_sandbox, data=assertion_form(published_sandbox))
    oidc_token(
        published_sandbox,
        data={**GRANT, "client_id": published_sandbox.client_id, "client_secret": secret},
    )
    oidc_token(published_sandbox, data=GRANT, auth=(published_sandbox.client_id, secret))
    oidc_token(published_sandbox, data=GRANT, auth=(published_sandbox.client_id, "wrong"))
    assert published_sandbox.stats()["tokens_issued"] == 3


# ------------------------------------------------------------ malformed requests
@pytest.mark.parametrize(
    ("request_", "status", "error", "says"),
    [
        ({"data": {"client_id": "authzkit-demo"}}, 400, "invalid_request", "grant_type is missing"),
        ({"data": {"grant_type": "password"}}, 400, "unsupported_grant_type", "client_credentials"),
        ({"json": GRANT}, 400, "invalid_request", "x-www-form-urlencoded"),
        (
            {
                "data": "grant_type=client_credentials&grant_type=client_credentials",
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
            },
            400,
            "invalid_request",
            "'grant_type' is repeated",
        ),
        (
            {
                "data": b"grant_type=client_credentials&x=%ff",
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
            },
            400,
            "invalid_request",
            "cannot be decoded",
        ),
        (
            {
                "data": "&".join(f"p{i}=1" for i in range(100)) + "&grant_type=client_credentials",
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
            },
            400,
            "invalid_request",
            "cannot be decoded",
        ),
        (
            {"data": {**GRANT, "client_assertion": "a.b.c"}},
            400,
            "invalid_request",
            "client_assertion_type must be",
        ),
        (
            {"data": {**GRANT, "client_assertion_type": ASSERTION_TYPE}},
            400,
            "invalid_request",
            "client_assertion is missing",
        ),
        (
            {"data": {**GRANT, "client_id": "authzkit-demo", "client_secret": ""}},
            401,
            "invalid_client",
            "no client authentication",
        ),
        ({"data": GRANT}, 401, "invalid_client", "no client authentication"),
        (
            {
                "data": "x" * (65 * 1024),
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
            },
            400,
            "invalid_request",
            "larger than",
        ),
    ],
)
def test_malformed_requests_get_oauth_errors(
    published_sandbox: Sandbox, request_: dict[str, object], status: int, error: str, says: str
) -> None:
    assert says in _refused(oidc_token(published_sandbox, **request_), status, error)


def test_one_client_authentication_method_at_a_time(published_sandbox: Sandbox) -> None:
    secret = published_sandbox.client_secret or ""
    both = {
        **assertion_form(published_sandbox),
        "client_id": published_sandbox.client_id,
        "client_secret": secret,
    }
    assert "one client authentication" in _refused(
        oidc_token(published_sandbox, data=both), 400, "invalid_request"
    )
    basic_and_post = oidc_token(
        published_sandbox,
        auth=(published_sandbox.client_id, secret),
        data={**GRANT, "client_secret": secret},
    )
    _refused(basic_and_post, 400, "invalid_request")
    assert published_sandbox.stats()["tokens_issued"] == 0


def test_form_encoding_of_basic_credentials_follows_rfc_6749(
    published_session_sandbox: Sandbox,
) -> None:
    """id and secret are form-urlencoded before Base64 (RFC 6749 §2.3.1): '+' is a space."""
    world = published_session_sandbox.world.to_json()
    world["clients"].append(
        {"client_id": "odd id:é", "client_secret": "p@ss word+/:é", "resource_server": True}
    )
    with Sandbox(world=world, dialect="published", key_size=2048) as odd:
        raw = f"{quote_plus('odd id:é')}:{quote_plus('p@ss word+/:é')}".encode()
        header = {
            "Authorization": "Basic " + base64.b64encode(raw).decode(),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        assert oidc_token(odd, data=urlencode(GRANT), headers=header).status_code == 200
        unencoded = base64.b64encode("odd id:é:p@ss word+/:é".encode()).decode()
        assert (
            oidc_token(odd, data=GRANT, headers={"Authorization": f"Basic {unencoded}"}).status_code
            == 401
        )
        post = {**GRANT, "client_id": "odd id:é", "client_secret": "p@ss word+/:é"}
        assert oidc_token(odd, data=post).status_code == 200
