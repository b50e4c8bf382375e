"""The published dialect's OpenAPI document: valid, complete, and true to the answers of a
``Sandbox(dialect="published")`` — the authorize bodies, the bare 401, the OIDC issuer's
discovery document and token endpoint (OAuth 2.0 errors included), and ``x-request-id``.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import requests
from openapi_spec_validator import validate as validate_openapi

from authzkit.sandbox import Sandbox
from authzkit.wire.error_table import ERRORS
from authzkit.wire.openapi import openapi_bytes

from support.openapi import (
    PUBLISHED_TYPES,
    Exchange,
    _media_examples,
    _validator,
    placed_types,
    response_pointer,
)
from support.openapi_scenarios import SCENARIOS, Caller
from support.tokens import (
    AUTHORIZE_PATH,
    KEYS_PATH,
    OIDC_CONFIGURATION,
    OIDC_TOKEN,
    TOKEN_PATH,
    assertion_form,
    client_assertion,
    fetch_published_access_token,
)


class PublishedCaller(Caller):
    """The draft caller's requests, sent to the published sandbox, plus its own cases."""

    def invalid_token(self) -> Exchange:
        return self.post(AUTHORIZE_PATH, self.body(), token="forged.access.token")

    def not_resource_server(self) -> Exchange:
        response = self.http.post(
            self.base_url + OIDC_TOKEN,
            timeout=10,
            data={
                "grant_type": "client_credentials",
                "client_id": self.outsider.client_id,
                "client_secret": self.outsider.client_secret,
            },
        )
        assert response.status_code == 200, response.text
        return self.post(AUTHORIZE_PATH, self.body(), token=response.json()["access_token"])

    def bad_authorize_request(self) -> Exchange:
        body = self.body()
        del body["action"]["name"]
        return self.post(AUTHORIZE_PATH, body)

    def draft_token_path(self) -> Exchange:
        response = self.http.post(
            self.base_url + TOKEN_PATH,
            timeout=10,
            json={"clientId": self.sandbox.client_id, "clientSecret": self.sandbox.client_secret},
        )
        return Exchange("", "", response)

    def method_not_allowed(self) -> Exchange:
        return Exchange("", "", self.http.get(self.base_url + OIDC_TOKEN, timeout=10))

    def service_unavailable(self) -> Exchange:
        with Sandbox(key_size=2048, error_rate=1.0, dialect="published") as faulty:
            response = self.http.post(
                faulty.base_url + AUTHORIZE_PATH, json=self.body(), timeout=10
            )
        return Exchange(AUTHORIZE_PATH, "post", response)


PUBLISHED_SCENARIOS: dict[str, Callable[[PublishedCaller], Exchange]] = {
    "200 authorized": PublishedCaller.shape_a,
    "200 authorized after a challenge": PublishedCaller.shape_b,
    "401 for the access token": PublishedCaller.invalid_token,
    "404 for the draft token path": PublishedCaller.draft_token_path,
    **{
        kind: getattr(PublishedCaller, kind.removeprefix("srn:error:"))
        for kind in sorted(PUBLISHED_TYPES)
    },
}
# What each scenario that is not named after its type must answer.
EXPECTED = {
    "401 for the access token": ("srn:error:unauthenticated", 401),
    "404 for the draft token path": ("srn:error:not_found", 404),
}


@pytest.fixture
def published_scenario_caller(
    published_sandbox: Sandbox, world: Any, http: requests.Session
) -> PublishedCaller:
    token = fetch_published_access_token(published_sandbox)
    return PublishedCaller(published_sandbox, world, token, http)


def _request_id(response: requests.Response) -> str:
    value = response.headers["x-request-id"]
    assert str(uuid.UUID(value)) == value
    return value


# ------------------------------------------------------------ the document alone
def test_document_is_a_valid_openapi_31_document(published_openapi: dict[str, Any]) -> None:
    assert published_openapi["openapi"].startswith("3.1.")
    validate_openapi(published_openapi)


def test_documents_the_issuer_and_not_the_draft_token_path(
    published_openapi: dict[str, Any],
) -> None:
    found = {(path, method) for path, item in published_openapi["paths"].items() for method in item}
    assert found == {
        (OIDC_CONFIGURATION, "get"),
        (OIDC_TOKEN, "post"),
        (KEYS_PATH, "get"),
        (AUTHORIZE_PATH, "post"),
    }
    token = published_openapi["paths"][OIDC_TOKEN]["post"]
    assert list(token["requestBody"]["content"]) == ["application/x-www-form-urlencoded"]
    flow = published_openapi["components"]["securitySchemes"]["clientCredentials"]["flows"]
    assert flow["clientCredentials"]["tokenUrl"] == OIDC_TOKEN


def test_every_type_the_published_sandbox_sends_is_placed_under_its_status(
    published_openapi: dict[str, Any],
) -> None:
    assert placed_types(published_openapi) == {(t, ERRORS[t].status) for t in PUBLISHED_TYPES}


def test_the_two_dialects_together_have_a_scenario_for_every_error_type() -> None:
    assert set(ERRORS) <= set(SCENARIOS) | set(PUBLISHED_SCENARIOS)
    assert "srn:error:bad_authorize_request" in PUBLISHED_SCENARIOS


def test_every_response_documents_x_request_id(published_openapi: dict[str, Any]) -> None:
    responses = [
        response
        for item in published_openapi["paths"].values()
        for operation in item.values()
        for response in operation["responses"].values()
    ]
    responses += published_openapi["components"]["responses"].values()
    for response in responses:
        response = published_openapi["components"]["responses"].get(
            response.get("$ref", "").rpartition("/")[2], response
        )
        assert "x-request-id" in response["headers"], response["description"]
    assert published_openapi["components"]["headers"]["RequestId"]["required"] is True


def test_every_example_fits_its_schema(published_openapi: dict[str, Any]) -> None:
    checked = 0
    for pointer, value in _media_examples(published_openapi):
        _validator(published_openapi, *pointer).validate(value)
        checked += 1
    for name, schema in published_openapi["components"]["schemas"].items():
        for value in schema.get("examples", []):
            _validator(published_openapi, "components", "schemas", name).validate(value)
            checked += 1
    assert checked >= len(PUBLISHED_TYPES) + 10


# ------------------------------------------------------- the sandbox's answers
@pytest.mark.parametrize("scenario", list(PUBLISHED_SCENARIOS))
def test_sandbox_answers_validate_against_the_document(
    scenario: str, published_scenario_caller: PublishedCaller, published_openapi: dict[str, Any]
) -> None:
    exchange = PUBLISHED_SCENARIOS[scenario](published_scenario_caller)
    response = exchange.response
    assert response.headers["content-type"].split(";")[0] == "application/json"
    request_id = _request_id(response)
    body = response.json()
    if scenario.startswith("200"):
        assert response.status_code == 200, response.text
        assert body["action"]["response"] == "nil" and uuid.UUID(body["id"])
    else:
        expected = EXPECTED.get(scenario) or (scenario, ERRORS[scenario].status)
        assert (body["type"], response.status_code) == expected, body
        if "status" not in body and response.status_code != 401:
            assert body["id"] == request_id  # an error body's id is the request's
    _validator(published_openapi, *response_pointer(published_openapi, exchange)).validate(body)


def _basic(client_id: str, secret: str | None) -> dict[str, str]:
    assert secret is not None, f"{client_id} has no client secret"
    raw = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


TOKEN_CASES: dict[str, tuple[Callable[[Sandbox], dict[str, Any]], int, str | None]] = {
    "private_key_jwt": (lambda sb: {"data": assertion_form(sb)}, 200, None),
    "client_secret_post": (
        lambda sb: {
            "data": {
                "grant_type": "client_credentials",
                "client_id": sb.client_id,
                "client_secret": sb.client_secret,
            }
        },
        200,
        None,
    ),
    "client_secret_basic": (
        lambda sb: {
            "data": {"grant_type": "client_credentials"},
            "headers": _basic(sb.client_id, sb.client_secret),
        },
        200,
        None,
    ),
    "no grant_type": (lambda sb: {"data": {"client_id": sb.client_id}}, 400, "invalid_request"),
    "a JSON body": (
        lambda sb: {"json": {"grant_type": "client_credentials"}},
        400,
        "invalid_request",
    ),
    "password grant": (
        lambda sb: {"data": {"grant_type": "password"}},
        400,
        "unsupported_grant_type",
    ),
    "wrong secret": (
        lambda sb: {
            "data": {
                "grant_type": "client_credentials",
                "client_id": sb.client_id,
                "client_secret": "x",
            }
        },
        400,
        "unauthorized_client",
    ),
    "garbage assertion": (
        lambda sb: {"data": {**assertion_form(sb), "client_assertion": "a.b.c"}},
        400,
        "invalid_client",
    ),
    "expired assertion": (
        lambda sb: {"data": assertion_form(sb, exp=int(sb.clock()) - 1)},
        400,
        "invalid_client",
    ),
    "no client authentication": (
        lambda sb: {"data": {"grant_type": "client_credentials"}},
        401,
        "invalid_client",
    ),
    "wrong Basic secret": (
        lambda sb: {
            "data": {"grant_type": "client_credentials"},
            "headers": _basic(sb.client_id, "x"),
        },
        401,
        "invalid_client",
    ),
}


@pytest.mark.parametrize("case", list(TOKEN_CASES))
def test_token_endpoint_answers_validate(
    case: str, published_sandbox: Sandbox, http: requests.Session, published_openapi: dict[str, Any]
) -> None:
    build, status, error = TOKEN_CASES[case]
    response = http.post(
        published_sandbox.base_url + OIDC_TOKEN, timeout=10, **build(published_sandbox)
    )
    assert response.status_code == status, response.text
    _request_id(response)
    body = response.json()
    assert body.get("error") == error
    assert "type" not in body  # never an srn:error:* on the token endpoint
    _validator(
        published_openapi,
        *response_pointer(published_openapi, Exchange(OIDC_TOKEN, "post", response)),
    ).validate(body)


def test_discovery_document_and_keys_validate(
    published_sandbox: Sandbox, http: requests.Session, published_openapi: dict[str, Any]
) -> None:
    for path in (OIDC_CONFIGURATION, KEYS_PATH):
        response = http.get(published_sandbox.base_url + path, timeout=10)
        assert response.status_code == 200
        _request_id(response)
        _validator(
            published_openapi, *response_pointer(published_openapi, Exchange(path, "get", response))
        ).validate(response.json())


def test_the_published_sandbox_serves_the_published_document(published_sandbox: Sandbox) -> None:
    response = requests.get(f"{published_sandbox.base_url}/openapi.json", timeout=10)
    assert response.status_code == 200
    assert response.content == openapi_bytes("published")
    _request_id(response)


def test_an_assertion_for_the_token_endpoint_url_is_accepted_too(
    published_sandbox: Sandbox,
) -> None:
    form = {
        **assertion_form(published_sandbox),
        "client_assertion": client_assertion(published_sandbox, aud=[published_sandbox.token_url]),
    }
    response = requests.post(published_sandbox.base_url + OIDC_TOKEN, data=form, timeout=10)
    assert response.status_code == 200, response.text
