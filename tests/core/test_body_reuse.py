"""The encoded authorize body is reused only for exactly the same request."""

from __future__ import annotations

import json
import time
from typing import Any

from authzkit.client.facade import AuthzClient
from authzkit.client.token import AccessToken

SHAPE_A = json.dumps(
    {
        "action": {"name": "a", "response": None, "status": "authorized"},
        "id": 1,
        "optional_actions": [],
    }
).encode()


class CapturingSession:
    """A Locust-like session (accepts catch_response) that records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        data: Any = None,
        headers: Any = None,
        catch_response: bool = False,
    ) -> Any:
        self.sent.append(data)

        class Response:
            status_code = 200
            content = SHAPE_A
            headers = None

            def __enter__(self) -> Any:
                return self

            def __exit__(self, *exc: Any) -> None:
                return None

            def success(self) -> None: ...

            def failure(self, message: str) -> None:
                raise AssertionError(message)

        return Response()


def client_with(session: CapturingSession) -> AuthzClient:
    client = AuthzClient(
        base_url="http://127.0.0.1:9", client_id="c", client_secret="s", session=session
    )
    client.token_provider._token = AccessToken.from_json(
        {"accessToken": "x.y.z", "expiresIn": 3600}, issued_at=time.time()
    )
    return client


def test_same_request_same_bytes_and_any_change_is_seen() -> None:
    session = CapturingSession()
    client = client_with(session)
    base: dict[str, Any] = {"resource_id": "r1", "subject_token": "token-1"}
    client.authorize("a", **base)
    client.authorize("a", **base)
    client.authorize("a", **{**base, "subject_token": "token-2"})
    client.authorize("a", **{**base, "resource_id": "r2"})
    client.authorize("a", **base, challenge_solution="jwe-1")
    client.authorize("a", **base, context={"channel": "web"})
    first, _again, token_2, resource_2, solution, context = (json.loads(b) for b in session.sent)
    assert session.sent[0] == session.sent[1]
    assert token_2["subject"]["token"] == "token-2"
    assert resource_2["action"]["context"]["resource_id"] == "r2"
    assert solution["subject"]["context"]["challenge_solution"] == "jwe-1"
    assert context["context"] == {"channel": "web"}
    assert first["subject"]["token"] == "token-1"


def test_kept_bodies_are_bounded() -> None:
    session = CapturingSession()
    client = client_with(session)
    for number in range(1000):
        client.authorize("a", resource_id=f"r{number}", subject_token="t")
    assert len(client._encoded_bodies) <= 256
