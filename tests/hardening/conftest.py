"""Fixtures of the hardening tests: the OpenAPI documents and the live sandboxes' tokens.

The draft sandbox is the session's one sandbox of ``tests/conftest.py``; the published
dialect's is ``published_sandbox`` here (one for the session, reset before every test).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from authzkit import jwe
from authzkit.openapi import openapi_document
from authzkit.sandbox import Sandbox
from authzkit.spec import CLIENT_ASSERTION_TYPE, OIDC_TOKEN_PATH, SANDBOX_REALM_PATH

TOKEN_PATH = "/api/v3.1/oauth/tokens"
KEYS_PATH = "/api/v1/discovery/keys"
AUTHORIZE_PATH = "/resources/v1/authorization/actions/authorize"
OIDC_TOKEN = SANDBOX_REALM_PATH + OIDC_TOKEN_PATH
OIDC_CONFIGURATION = SANDBOX_REALM_PATH + "/.well-known/openid-configuration"


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    return openapi_document()


@pytest.fixture(scope="session")
def published_openapi() -> dict[str, Any]:
    return openapi_document("published")


@pytest.fixture(scope="session")
def published_sandbox() -> Iterator[Sandbox]:
    """The published dialect's sandbox of the hardening tests."""
    with Sandbox(dialect="published", key_size=2048) as sandbox:
        yield sandbox


@pytest.fixture
def published(published_sandbox: Sandbox) -> Sandbox:
    """The published sandbox with its challenges, assertion ids and counters reset."""
    published_sandbox.reset()
    return published_sandbox


def client_assertion(sandbox: Any, **claims: Any) -> str:
    """A fresh, valid private_key_jwt assertion of the demo client; ``claims`` override."""
    now = int(sandbox.clock())
    base = {"iss": sandbox.client_id, "sub": sandbox.client_id, "aud": sandbox.issuer,
            "iat": now, "nbf": now, "exp": now + 60, "jti": str(uuid.uuid4())}
    return jwe.ClientKey.load(sandbox.client_key_pem).sign({**base, **claims})


def assertion_form(sandbox: Any, **claims: Any) -> dict[str, str]:
    """The token endpoint's form for a private_key_jwt grant."""
    return {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": client_assertion(sandbox, **claims)}


def fetch_published_access_token(sandbox: Any) -> str:
    """An access token from the published issuer, as a resource server gets it."""
    response = requests.post(sandbox.base_url + OIDC_TOKEN, data=assertion_form(sandbox),
                             timeout=10)
    response.raise_for_status()
    return response.json()["access_token"]


@pytest.fixture
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


SUMMARY_TEST = "test_enough_cases_ran_and_reached_the_authorize_logic"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The schemathesis summary judges what the module's other tests recorded: it runs after
    them in any order (``--test-order``, or a plugin that shuffles)."""
    for summary in [item for item in items if item.name == SUMMARY_TEST]:  # one per module
        rest = [item for item in items if item is not summary]
        module = [index for index, item in enumerate(rest) if item.path == summary.path]
        at = module[-1] + 1 if module else len(rest)
        items[:] = [*rest[:at], summary, *rest[at:]]


def fetch_access_token(base_url: str, client_id: str, client_secret: str) -> str:
    """An access token from the token endpoint, as a resource server would get it."""
    response = requests.post(f"{base_url}{TOKEN_PATH}", timeout=10,
                             json={"clientId": client_id, "clientSecret": client_secret})
    response.raise_for_status()
    return response.json()["accessToken"]


@pytest.fixture
def access_token(sandbox: Any) -> str:
    """A fresh access token of the sandbox's resource_server client."""
    return fetch_access_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
