"""Fixtures of the hardening tests: the OpenAPI document and the live sandbox's tokens.

The sandbox itself is the session's one sandbox of ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from authzkit.openapi import openapi_document

TOKEN_PATH = "/api/v3.1/oauth/tokens"
KEYS_PATH = "/api/v1/discovery/keys"
AUTHORIZE_PATH = "/resources/v1/authorization/actions/authorize"


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    return openapi_document()


@pytest.fixture
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


SUMMARY_TEST = "test_enough_cases_ran_and_reached_the_authorize_logic"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The schemathesis summary judges what the module's other tests recorded: it runs after
    them in any order (``--test-order``, or a plugin that shuffles)."""
    summary = [item for item in items if item.name == SUMMARY_TEST]
    if not summary:
        return
    rest = [item for item in items if item.name != SUMMARY_TEST]
    module = [index for index, item in enumerate(rest) if item.path == summary[0].path]
    at = module[-1] + 1 if module else len(rest)
    items[:] = rest[:at] + summary + rest[at:]


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
