"""The draft's OpenAPI document: a valid 3.1 document, complete, and true to the sandbox's
answers.

Every error type the draft sandbox sends must be documented with its status, every example
in the document must fit its own schema, and the sandbox's real answers (both 200 shapes,
the challenge, and every error type) must validate against the document's response schemas.
The published dialect's document gets the same treatment in ``test_published_openapi.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from openapi_spec_validator import validate as validate_openapi

from authzkit.wire.error_table import ERRORS
from authzkit.wire.errors import ConfigError
from authzkit.wire.openapi import openapi_bytes, openapi_document

from support.openapi import (
    DRAFT_TYPES,
    PUBLISHED_ONLY,
    Exchange,
    _documented_types,
    _media_examples,
    _operations,
    _validator,
    placed_types,
    response_pointer,
)
from support.openapi_scenarios import SCENARIOS, Caller
from support.tokens import AUTHORIZE_PATH, KEYS_PATH, TOKEN_PATH


# ------------------------------------------------------------ the document alone
def test_document_is_a_valid_openapi_31_document(openapi: dict[str, Any]) -> None:
    assert openapi["openapi"].startswith("3.1.")
    validate_openapi(openapi)


def test_loader_returns_a_fresh_copy_of_the_shipped_file() -> None:
    first = openapi_document()
    first["info"]["title"] = "changed by a caller"
    assert openapi_document()["info"]["title"] != "changed by a caller"
    assert json.loads(openapi_bytes()) == openapi_document()


def test_documents_the_three_endpoints_of_the_spec(openapi: dict[str, Any]) -> None:
    found = {(path, method) for path, method, _ in _operations(openapi)}
    assert found == {(TOKEN_PATH, "post"), (KEYS_PATH, "get"), (AUTHORIZE_PATH, "post")}


def test_authorize_uses_bearer_auth_and_the_token_endpoint_does_not(
    openapi: dict[str, Any],
) -> None:
    scheme = openapi["components"]["securitySchemes"]["bearerAuth"]
    assert (scheme["type"], scheme["scheme"], scheme["bearerFormat"]) == ("http", "bearer", "JWT")
    paths = openapi["paths"]
    assert paths[AUTHORIZE_PATH]["post"]["security"] == [{"bearerAuth": []}]
    assert paths[TOKEN_PATH]["post"]["security"] == []


def test_loader_knows_both_dialects_and_names_them_for_any_other() -> None:
    assert openapi_document("published")["info"]["title"].endswith("(published dialect)")
    with pytest.raises(ConfigError, match="draft, published"):
        openapi_bytes("keycloak")


def test_every_error_type_is_documented_with_its_status(openapi: dict[str, Any]) -> None:
    everywhere = set(_documented_types(openapi, openapi))
    for type_ in DRAFT_TYPES:
        kind = ERRORS[type_]
        assert (kind.type, kind.status) in everywhere, f"{kind.type} ({kind.status}) missing"
    assert {type_ for type_, _ in everywhere} <= set(ERRORS), "a type the table does not know"
    assert not PUBLISHED_ONLY & {type_ for type_, _ in everywhere}, "the draft never sends it"
    assert placed_types(openapi) == {(t, ERRORS[t].status) for t in DRAFT_TYPES}


def test_every_error_is_answerable_where_the_service_sends_it(openapi: dict[str, Any]) -> None:
    """Each (type, status) sits under a response of that status: an operation's or a routing one."""
    placed: set[tuple[str, int]] = set()
    for _, _, operation in _operations(openapi):
        for status, response in operation["responses"].items():
            for pair in _documented_types(openapi, response):
                assert pair[1] == int(status), f"{pair} documented under {status}"
                placed.add(pair)
    for response in openapi["components"].get("responses", {}).values():
        placed.update(_documented_types(openapi, response))
    assert {(ERRORS[t].type, ERRORS[t].status) for t in DRAFT_TYPES} <= placed
    token_401 = openapi["paths"][TOKEN_PATH]["post"]["responses"]["401"]
    assert set(_documented_types(openapi, token_401)) == {("srn:error:invalid_client", 401)}


def test_request_body_documents_every_field_of_the_spec(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    request = schemas["AuthorizationRequest"]["properties"]
    assert {"action", "subject", "context", "optional_actions"} <= set(request)
    assert set(schemas["Action"]["properties"]) == {"name", "context"}
    assert set(schemas["ActionContext"]["properties"]) == {"resource_id", "resource_type"}
    assert {"token", "context", "type"} <= set(schemas["Subject"]["properties"])
    assert set(schemas["SubjectContext"]["properties"]) == {
        "request_hash",
        "user_agent",
        "user_ip",
        "challenge_solution",
    }
    assert set(schemas["Challenge"]["required"]) == {"id", "required_types", "type", "details"}


def test_every_example_fits_its_schema(openapi: dict[str, Any]) -> None:
    checked = 0
    for pointer, value in _media_examples(openapi):
        _validator(openapi, *pointer).validate(value)
        checked += 1
    for name, schema in openapi["components"]["schemas"].items():
        for value in schema.get("examples", []):
            _validator(openapi, "components", "schemas", name).validate(value)
            checked += 1
    assert checked >= len(DRAFT_TYPES) + 5


def test_a_scenario_exists_for_every_error_type_the_draft_sends() -> None:
    """(The published dialect's own type has its scenario in test_published_openapi.py,
    which also checks that the two together cover the whole error table.)"""
    assert set(DRAFT_TYPES) <= set(SCENARIOS)


@pytest.fixture
def scenario_caller(sandbox: Any, world: Any, access_token: str, http: requests.Session) -> Caller:
    return Caller(sandbox, world, access_token, http)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_sandbox_answers_validate_against_the_document(
    scenario: str, scenario_caller: Caller, openapi: dict[str, Any]
) -> None:
    exchange = SCENARIOS[scenario](scenario_caller)
    response = exchange.response
    assert response.headers["content-type"].split(";")[0] == "application/json"
    body = response.json()
    if scenario.startswith("200"):
        assert response.status_code == 200, response.text
        assert ("id" in body) == scenario.endswith("A")
    else:
        assert (body["type"], response.status_code) == (scenario, ERRORS[scenario].status), body
    _validator(openapi, *response_pointer(openapi, exchange)).validate(body)


def test_discovery_and_token_answers_validate(
    scenario_caller: Caller, openapi: dict[str, Any]
) -> None:
    keys = scenario_caller.http.get(scenario_caller.base_url + KEYS_PATH, timeout=10)
    assert keys.status_code == 200
    _validator(openapi, *response_pointer(openapi, Exchange(KEYS_PATH, "get", keys))).validate(
        keys.json()
    )
    token = scenario_caller.post(
        TOKEN_PATH,
        {
            "clientId": scenario_caller.sandbox.client_id,
            "clientSecret": scenario_caller.sandbox.client_secret,
        },
        token=None,
    )
    assert token.response.status_code == 200
    _validator(openapi, *response_pointer(openapi, token)).validate(token.response.json())


def test_the_sandbox_serves_the_shipped_document(sandbox: Any) -> None:
    response = requests.get(f"{sandbox.base_url}/openapi.json", timeout=10)
    if response.status_code == 404:
        pytest.skip("the sandbox has no GET /openapi.json route yet")
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == "application/json"
    assert response.json() == openapi_document()


def test_a_private_key_would_break_the_document(openapi: dict[str, Any]) -> None:
    """The key set schema refuses private members, so a leaking server fails validation."""
    leaked = {
        "keys": [{"kty": "RSA", "use": "enc", "kid": "k", "n": "AQAB", "e": "AQAB", "d": "secret"}]
    }
    assert not _validator(openapi, "components", "schemas", "KeySet").is_valid(leaked)
