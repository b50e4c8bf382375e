"""What the draft and published OpenAPI and schemathesis tests share: the resource server
that provokes each documented answer, and the real credentials a fuzzed case is given."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pyotp
import requests

from authzkit.sandbox import Sandbox
from authzkit.wire import jwe

from support.openapi import (
    DRAFT_TYPES,
    USER_AGENT,
    Exchange,
)
from support.tokens import AUTHORIZE_PATH, KEYS_PATH, TOKEN_PATH, fetch_access_token


# ------------------------------------------------------- the sandbox's answers
class Caller:
    """Sends the requests a resource server would, to provoke each documented answer."""

    def __init__(self, sandbox: Any, world: Any, access_token: str, http: requests.Session) -> None:
        self.sandbox = sandbox
        self.base_url = sandbox.base_url
        self.http = http
        self.access_token = access_token
        self.alice = sandbox.session_token("alice")
        self.own = next(r for r in world.resources.values() if r.owner == "alice")
        self.foreign = next(r for r in world.resources.values() if r.owner != "alice")
        self.plain = next(a.name for a in world.actions.values() if not a.required_types)
        self.pin_action = next(
            a.name for a in world.actions.values() if a.required_types == ("pin",)
        )
        self.pin = world.subjects["alice"].credentials["pin"]
        self.outsider = next(c for c in world.clients.values() if not c.resource_server)

    def post(
        self,
        path: str,
        body: Any = None,
        *,
        token: str | None = "default",
        data: bytes | None = None,
    ) -> Exchange:
        headers = {"Accept": "application/json"}
        bearer = self.access_token if token == "default" else token
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        if data is not None:
            headers["Content-Type"] = "application/json"
            response = self.http.post(self.base_url + path, data=data, headers=headers, timeout=10)
        else:
            response = self.http.post(self.base_url + path, json=body, headers=headers, timeout=10)
        return Exchange(path, "post", response)

    def body(
        self,
        *,
        action: str | None = None,
        resource: Any = None,
        subject_token: str | None = None,
        solution: str | None = None,
    ) -> dict[str, Any]:
        resource = resource or self.own
        context: dict[str, Any] = {
            "request_hash": "0" * 64,
            "user_agent": USER_AGENT,
            "user_ip": "127.0.0.1",
        }
        if solution is not None:
            context["challenge_solution"] = solution
        return {
            "action": {
                "name": action or self.plain,
                "context": {"resource_id": resource.id, "resource_type": resource.type},
            },
            "subject": {"type": "user", "token": subject_token or self.alice, "context": context},
            "context": {},
            "optional_actions": [],
        }

    def authorize(self, **kwargs: Any) -> Exchange:
        return self.post(AUTHORIZE_PATH, self.body(**kwargs))

    def enc_key(self) -> dict[str, Any]:
        keys = self.http.get(self.base_url + KEYS_PATH, timeout=10).json()["keys"]
        return next(key for key in keys if key["use"] == "enc")

    def challenge_id(self) -> str:
        response = self.authorize(action=self.pin_action).response
        assert response.status_code == 403, response.text
        return response.json()["challenge"]["id"]

    def solve(self, payload: dict[str, Any], *, jwk: dict[str, Any] | None = None) -> Exchange:
        key = jwe.PublicKey.from_jwk(jwk or self.enc_key())
        return self.authorize(action=self.pin_action, solution=jwe.encrypt(key, payload))

    # One way to provoke each answer; keyed by the expected ``type`` (or 200 shape).
    def shape_a(self) -> Exchange:
        return self.authorize()

    def shape_b(self) -> Exchange:
        return self.solve({"challenge_id": self.challenge_id(), "pin": self.pin})

    def challenge_required(self) -> Exchange:
        return self.authorize(action=self.pin_action)

    def unauthenticated(self) -> Exchange:
        return self.authorize(subject_token="not-a-session-token")

    def unauthorized(self) -> Exchange:
        return self.authorize(resource=self.foreign)

    def bad_jwe_token(self) -> Exchange:
        return self.authorize(action=self.pin_action, solution="definitely.not.a.jwe")

    def unrecognized_key(self) -> Exchange:
        return self.solve(
            {"challenge_id": self.challenge_id(), "pin": self.pin},
            jwk={**self.enc_key(), "kid": str(uuid.uuid4())},
        )

    def wrong_challenge_solution(self) -> Exchange:
        self.challenge_id()
        return self.solve({"pin": self.pin})

    def bad_challenge_solution(self) -> Exchange:
        return self.solve({"challenge_id": self.challenge_id(), "pin": "not-the-pin"})

    def challenge_not_found(self) -> Exchange:
        return self.solve({"challenge_id": str(uuid.uuid4()), "pin": self.pin})

    def invalid_token(self) -> Exchange:
        return self.post(AUTHORIZE_PATH, self.body(), token="forged.access.token")

    def not_resource_server(self) -> Exchange:
        token = fetch_access_token(
            self.base_url, self.outsider.client_id, self.outsider.client_secret
        )
        return self.post(AUTHORIZE_PATH, self.body(), token=token)

    def invalid_client(self) -> Exchange:
        return self.post(
            TOKEN_PATH,
            {"clientId": self.sandbox.client_id, "clientSecret": "wrong-secret"},
            token=None,
        )

    def bad_request(self) -> Exchange:
        body = self.body()
        del body["action"]["name"]
        return self.post(AUTHORIZE_PATH, body)

    def payload_too_large(self) -> Exchange:
        return self.post(AUTHORIZE_PATH, data=b" " * (65 * 1024))

    def not_found(self) -> Exchange:
        response = self.http.get(self.base_url + "/resources/v1/no-such-endpoint", timeout=10)
        return Exchange("", "", response)

    def service_unavailable(self) -> Exchange:
        # Only fault injection sends it: a sandbox of its own, every spec call a 503.
        with Sandbox(key_size=2048, error_rate=1.0) as faulty:
            response = self.http.post(
                faulty.base_url + AUTHORIZE_PATH, json=self.body(), timeout=10
            )
        return Exchange(AUTHORIZE_PATH, "post", response)

    def method_not_allowed(self) -> Exchange:
        response = self.http.get(self.base_url + TOKEN_PATH, timeout=10)
        return Exchange("", "", response)


SCENARIOS: dict[str, Callable[[Caller], Exchange]] = {
    "200 shape A": Caller.shape_a,
    "200 shape B": Caller.shape_b,
    **{kind: getattr(Caller, kind.removeprefix("srn:error:")) for kind in sorted(DRAFT_TYPES)},
}


PLAIN_ACTION = "show_account_balance_public"
PIN_ACTION = "transfer_funds"


class Credentials:
    """The sandbox's real tokens and world, handed to the generated cases."""

    def __init__(self, sandbox: Any, world: Any) -> None:
        self.base_url = sandbox.base_url
        self.client_id = sandbox.client_id
        self.client_secret = sandbox.client_secret
        self.access_token = fetch_access_token(
            sandbox.base_url, sandbox.client_id, sandbox.client_secret
        )
        self.session_token = sandbox.session_token("alice")
        self.credentials = world.subjects["alice"].credentials
        owned = [r for r in world.resources.values() if r.owner == "alice"]
        self.resources: dict[str, tuple[str, str]] = {}  # each owner's first resource
        for resource in world.resources.values():
            self.resources.setdefault(resource.owner, (resource.id, resource.type))
        self.targets = [
            (action.name, resource.id, resource.type)
            for action in world.actions.values()
            for resource in owned
        ]
        keys = requests.get(f"{self.base_url}{KEYS_PATH}", timeout=10).json()["keys"]
        self.key = jwe.PublicKey.from_jwk(next(key for key in keys if key["use"] == "enc"))

    def challenge_for(
        self, action: str, resource_id: str, resource_type: str
    ) -> dict[str, Any] | None:
        """A fresh challenge for the action on the resource; None when none is demanded."""
        answer = requests.post(
            f"{self.base_url}{AUTHORIZE_PATH}",
            timeout=10,
            json=authorize_body(action, resource_id, resource_type, self.session_token),
            headers=self.bearer(),
        )
        challenge = answer.json().get("challenge") if answer.status_code == 403 else None
        return challenge if isinstance(challenge, dict) else None

    def solution_for(self, action: str, resource_id: str, resource_type: str) -> str | None:
        """A correct, encrypted solution of a fresh challenge; None when none is demanded."""
        challenge = self.challenge_for(action, resource_id, resource_type)
        if challenge is None:
            return None
        kind = challenge["required_types"][0]
        secret = self.credentials[kind]
        value = pyotp.TOTP(secret).now() if kind == "totp" else secret
        return jwe.encrypt(self.key, {"challenge_id": challenge["id"], kind: value})

    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


def authorize_body(
    action: str,
    resource_id: str,
    resource_type: str,
    session_token: str,
    solution: str | None = None,
) -> dict[str, Any]:
    """An authorization request body as SPEC shows it."""
    context = {} if solution is None else {"challenge_solution": solution}
    return {
        "action": {
            "name": action,
            "context": {"resource_id": resource_id, "resource_type": resource_type},
        },
        "subject": {"token": session_token, "context": context},
    }


def _swap_body(body: dict[str, Any], credentials: Credentials, turn: int, kind: int) -> None:
    subject = body["subject"]
    subject["token"] = credentials.session_token
    action = body.get("action")
    if kind < 3 or not isinstance(action, dict) or not isinstance(action.get("context"), dict):
        return
    name, resource_id, resource_type = credentials.targets[turn % len(credentials.targets)]
    action["name"] = name
    action["context"]["resource_id"] = resource_id
    action["context"]["resource_type"] = resource_type
    context = subject.get("context")
    if kind < 4 or not isinstance(context, dict):
        return
    context.pop("challenge_solution", None)
    if kind == 5:
        solution = credentials.solution_for(name, resource_id, resource_type)
        if solution is not None:
            context["challenge_solution"] = solution
