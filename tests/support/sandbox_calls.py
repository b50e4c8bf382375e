"""A plain-requests caller of the sandbox, so these tests exercise the wire format itself."""

from __future__ import annotations

import uuid
from typing import Any

import requests

from authzkit.sandbox import Sandbox
from authzkit.wire import jwe

AUTHORIZE = "/resources/v1/authorization/actions/authorize"
TOKENS = "/api/v3.1/oauth/tokens"
KEYS = "/api/v1/discovery/keys"
ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"
BOB_ACCOUNT = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"
ACCOUNT = "srn:resource:account"


def body(
    action: str,
    token: str,
    *,
    resource_id: str = ALICE_ACCOUNT,
    resource_type: str = ACCOUNT,
    solution: str | None = None,
) -> dict[str, Any]:
    """An authorization request body as SPEC shows it."""
    context: dict[str, Any] = {
        "request_hash": "sha256-of-body",
        "user_agent": "pytest",
        "user_ip": "127.0.0.1",
    }
    if solution is not None:
        context["challenge_solution"] = solution
    return {
        "action": {
            "name": action,
            "context": {"resource_id": resource_id, "resource_type": resource_type},
        },
        "subject": {"token": token, "context": context},
        "context": {},
    }


class Caller:
    """One resource server talking to the sandbox over HTTP."""

    def __init__(
        self, sandbox: Sandbox, *, client_id: str | None = None, client_secret: str | None = None
    ) -> None:
        self.sandbox = sandbox
        self.http = requests.Session()
        self.client_id = client_id or sandbox.client_id
        self.client_secret = client_secret or sandbox.client_secret
        self._access_token: str | None = None

    def url(self, path: str) -> str:
        return self.sandbox.base_url + path

    def token_response(self, client_id: str, client_secret: str | None) -> requests.Response:
        return self.http.post(
            self.url(TOKENS), json={"clientId": client_id, "clientSecret": client_secret}
        )

    @property
    def access_token(self) -> str:
        if self._access_token is None:
            response = self.token_response(self.client_id, self.client_secret)
            assert response.status_code == 200, response.text
            self._access_token = response.json()["accessToken"]
        return self._access_token

    def authorize(
        self,
        payload: Any,
        *,
        access_token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> requests.Response:
        sent = {"Authorization": f"Bearer {access_token or self.access_token}"}
        sent.update(headers or {})
        if isinstance(payload, bytes | str):
            return self.http.post(
                self.url(AUTHORIZE),
                data=payload,
                headers={**sent, "Content-Type": "application/json"},
            )
        return self.http.post(self.url(AUTHORIZE), json=payload, headers=sent)

    def enc_key(self) -> jwe.PublicKey:
        keys = self.http.get(self.url(KEYS)).json()["keys"]
        return jwe.PublicKey.from_jwk(next(k for k in keys if k["use"] == "enc"))

    def solution(self, payload: dict[str, Any], *, alg: str = jwe.DEFAULT_ALG) -> str:
        return jwe.encrypt(self.enc_key(), payload, alg=alg)

    def challenge(
        self, action: str, subject: str = "alice", resource_id: str = ALICE_ACCOUNT
    ) -> tuple[str, str]:
        """``(challenge_id, session token)`` of a fresh challenge for ``action``."""
        token = self.sandbox.session_token(subject)
        response = self.authorize(body(action, token, resource_id=resource_id))
        assert response.status_code == 403, response.text
        return response.json()["challenge"]["id"], token

    def solve(
        self,
        action: str,
        answer: dict[str, Any],
        *,
        subject: str = "alice",
        resource_id: str = ALICE_ACCOUNT,
    ) -> requests.Response:
        challenge_id, token = self.challenge(action, subject, resource_id)
        return self.authorize(
            body(
                action,
                token,
                resource_id=resource_id,
                solution=self.solution({"challenge_id": challenge_id, **answer}),
            )
        )


# -- the published dialect -------------------------------------------------------------------
REALM = "/auth/realms/authzkit"
OIDC_TOKEN = REALM + "/protocol/openid-connect/token"
OIDC_CONFIGURATION = REALM + "/.well-known/openid-configuration"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def claims(sandbox: Sandbox, **overrides: Any) -> dict[str, Any]:
    """The claims of a fresh, valid client assertion of the demo client (on the sandbox's
    clock); ``overrides`` replace or, given ``None``, remove claims."""
    now = int(sandbox.clock())
    found = {
        "iss": sandbox.client_id,
        "sub": sandbox.client_id,
        "aud": sandbox.issuer,
        "iat": now,
        "nbf": now,
        "exp": now + 60,
        "jti": str(uuid.uuid4()),
    }
    found.update(overrides)
    return {key: value for key, value in found.items() if value is not None}


def assertion(sandbox: Sandbox, key: jwe.ClientKey | None = None, **overrides: Any) -> str:
    """A compact RS256 client assertion, signed with the demo client's key unless ``key``."""
    signer = key or jwe.ClientKey.load(sandbox.client_key_pem or "")
    return signer.sign(claims(sandbox, **overrides))


def assertion_form(
    sandbox: Sandbox, compact: str | None = None, **overrides: Any
) -> dict[str, str]:
    """A private_key_jwt client credentials form."""
    return {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": compact or assertion(sandbox, **overrides),
    }


def oidc_token(sandbox: Sandbox, **request: Any) -> requests.Response:
    """``POST`` to the published token endpoint (``data=``, ``headers=``, ``auth=`` …)."""
    return requests.post(sandbox.base_url + OIDC_TOKEN, timeout=10, **request)


def published_access_token(sandbox: Sandbox) -> str:
    response = oidc_token(sandbox, data=assertion_form(sandbox))
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])
