"""The published sandbox accepts exactly what the certified provider accepts.

The same kinds of client assertion go to both token endpoints: without a ``kid``, with a
``kid`` nobody registered, with the issuer, the issuer with its trailing slash toggled, the
token endpoint as audience, and a replayed ``jti``. Each must get the same verdict from
both (accepted, or refused as ``invalid_client``), so what works on the sandbox works on a
strict provider.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.wire import jwe
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE

from support.certified_provider import CertifiedProvider, Keys

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class TokenService:
    """One token endpoint and a private_key_jwt client of it registered without a kid."""

    issuer: str
    token_endpoint: str
    client_id: str
    key_pem: str

    def send(self, assertion: str) -> requests.Response:
        form = {
            "grant_type": "client_credentials",
            "client_id": self.client_id,
            "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": assertion,
        }
        return requests.post(self.token_endpoint, data=form, timeout=10)

    def assertion(self, *, aud: Any, kid: str | None = None, jti: str | None = None) -> str:
        now = int(time.time())
        key = jwe.ClientKey.load(self.key_pem, kid=kid)
        return key.sign(
            {
                "iss": self.client_id,
                "sub": self.client_id,
                "aud": aud,
                "iat": now,
                "exp": now + 60,
                "jti": jti or str(uuid.uuid4()),
            }
        )


@pytest.fixture(params=["oidc-provider", "published sandbox"])
def token_service(request: pytest.FixtureRequest, keys: Keys) -> TokenService:
    if request.param == "oidc-provider":
        provider: CertifiedProvider = request.getfixturevalue("provider")
        return TokenService(
            provider.issuer, provider.token_endpoint, "key-jwt-no-kid", keys.unnamed.private_pem()
        )
    sandbox: Sandbox = request.getfixturevalue("published_sandbox")
    assert sandbox.issuer and sandbox.token_url and sandbox.client_key_pem
    return TokenService(
        sandbox.issuer, sandbox.token_url, sandbox.client_id, sandbox.client_key_pem
    )


def toggled_slash(url: str) -> str:
    return url[:-1] if url.endswith("/") else url + "/"


CASES: dict[str, tuple[Callable[[TokenService], str], int]] = {
    "no kid, aud the issuer": (lambda s: s.assertion(aud=s.issuer), 200),
    "aud the token endpoint": (lambda s: s.assertion(aud=s.token_endpoint), 200),
    "aud a list naming the issuer": (lambda s: s.assertion(aud=["https://x.test", s.issuer]), 200),
    "a kid nobody registered": (lambda s: s.assertion(aud=s.issuer, kid="made-up"), 401),
    "the issuer's trailing slash toggled": (
        lambda s: s.assertion(aud=toggled_slash(s.issuer)),
        401,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_verdict(token_service: TokenService, case: str) -> None:
    build, expected = CASES[case]
    answer = token_service.send(build(token_service))
    accepted = answer.status_code == 200
    assert accepted == (expected == 200), answer.text
    if not accepted:  # the sandbox answers 400 like Keycloak, oidc-provider 401: both refuse
        assert answer.status_code in (400, 401) and answer.json()["error"] == "invalid_client"


def test_a_replayed_assertion_is_refused_by_both(token_service: TokenService) -> None:
    assertion = token_service.assertion(aud=token_service.issuer)
    assert token_service.send(assertion).status_code == 200
    again = token_service.send(assertion)
    assert again.status_code in (400, 401) and again.json()["error"] == "invalid_client"
