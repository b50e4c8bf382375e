"""Discovery, rotation, the /sandbox/v1 endpoints, SandboxAdmin and the counters."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
import requests

from authzkit.sandbox import Sandbox, SandboxAdmin
from authzkit.sandbox.world import World
from authzkit.wire import identity
from authzkit.wire.errors import BadRequestError, TransportError
from authzkit.wire.spec import SANDBOX_IDENTITY

from support.fake_service import FakeService, Reply
from support.sandbox_calls import KEYS, Caller, body

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth"}


def _keys(sandbox: Sandbox) -> list[dict[str, str]]:
    response = requests.get(sandbox.base_url + KEYS, timeout=5)
    assert response.status_code == 200
    return response.json()["keys"]


def test_discovery_publishes_a_sig_and_an_enc_key_without_private_parts(sandbox: Sandbox) -> None:
    keys = _keys(sandbox)
    assert [k["use"] for k in keys] == ["sig", "enc"]
    for key in keys:
        assert key["kty"] == "RSA"
        assert uuid.UUID(key["kid"])
        assert not PRIVATE_MEMBERS & set(key)
    assert keys[1]["alg"] == "RSA-OAEP-256"
    assert sandbox.stats()["keys_served"] == 1


def test_rotation_publishes_only_the_new_enc_key_and_keeps_the_sig_key(sandbox: Sandbox) -> None:
    before = _keys(sandbox)
    new_kid = SandboxAdmin(sandbox.base_url).rotate_keys()
    after = _keys(sandbox)
    assert after[0] == before[0]
    assert after[1]["kid"] == new_kid != before[1]["kid"]
    assert before[1]["kid"] not in {k["kid"] for k in after}
    # tokens signed before the rotation still verify
    assert (
        Caller(sandbox)
        .authorize(body("show_account_balance_public", sandbox.session_token("alice")))
        .status_code
        == 200
    )


def test_admin_reads_the_world(sandbox: Sandbox, world: World) -> None:
    served = SandboxAdmin(sandbox.base_url).world()
    assert served == sandbox.world.to_json()
    # The default world, with the demo client's key pair made at start in place of the
    # generate_key flag: its public JWK and, it being a sandbox, the private key too.
    demo = served["clients"][0]
    assert demo["client_key_pem"] == sandbox.client_key_pem
    assert demo["public_key"]["kty"] == "RSA" and "d" not in demo["public_key"]
    expected = world.to_json()
    del expected["clients"][0]["generate_key"], demo["client_key_pem"], demo["public_key"]
    assert served == expected


def test_admin_mints_session_tokens_with_a_ttl(sandbox: Sandbox) -> None:
    admin = SandboxAdmin(sandbox.base_url + "/")
    token = admin.session_token("bob", ttl=30)
    response = requests.post(
        sandbox.base_url + "/sandbox/v1/sessions", json={"subject": "bob"}, timeout=5
    )
    assert response.json()["expires_in"] == sandbox.token_ttl
    caller = Caller(sandbox)
    account = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"
    assert (
        caller.authorize(
            body("show_account_balance_public", token, resource_id=account)
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"subject": "mallory"}, "request_body.subject"),
        ({}, "request_body.subject"),
        ({"subject": "bob", "ttl": -1}, "request_body.ttl"),
        ({"subject": "bob", "ttl": "5"}, "request_body.ttl"),
    ],
)
def test_sessions_refuse_unknown_subjects_and_bad_ttls(
    sandbox: Sandbox, payload: dict[str, object], field: str
) -> None:
    response = requests.post(sandbox.base_url + "/sandbox/v1/sessions", json=payload, timeout=5)
    assert response.status_code == 400
    assert response.json()["field"] == field
    with pytest.raises(BadRequestError):
        SandboxAdmin(sandbox.base_url).session_token("mallory")


def test_stats_count_every_issuance_and_reset_clears_them(sandbox: Sandbox) -> None:
    admin = SandboxAdmin(sandbox.base_url)
    caller = Caller(sandbox)
    token = sandbox.session_token("alice")
    caller.authorize(body("transfer_funds", token))
    caller.enc_key()
    stats = admin.stats()
    assert stats == sandbox.stats()
    assert stats == {
        "tokens_issued": 1,
        "keys_served": 1,
        "challenges_issued": 1,
        "authorize": {"srn:error:challenge_required": 1},
    }
    sandbox.reset()
    assert admin.stats() == {
        "tokens_issued": 0,
        "keys_served": 0,
        "challenges_issued": 0,
        "authorize": {},
    }


def test_reset_forgets_open_challenges(sandbox: Sandbox) -> None:
    caller = Caller(sandbox)
    challenge_id, token = caller.challenge("transfer_funds")
    solution = caller.solution({"challenge_id": challenge_id, "pin": "1234"})
    sandbox.reset()
    response = caller.authorize(body("transfer_funds", token, solution=solution))
    assert response.json()["type"] == "srn:error:challenge_not_found"


class Counting(requests.Session):
    """A session that counts the requests sent through it."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self.sent += 1
        return super().request(*args, **kwargs)


def test_admin_translates_a_dead_sandbox_into_a_transport_error_naming_the_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(identity, "RETRY_PAUSES_S", (0.01, 0.01))
    session = Counting()
    admin = SandboxAdmin("http://127.0.0.1:9", timeout=1, session=session)
    with pytest.raises(TransportError, match=r"^sandbox GET stats: ConnectionError \(New"):
        admin.stats()
    assert session.sent == 1  # refused: nothing listens there, said at once
    unresolved = SandboxAdmin("http://sandbox.invalid:9", timeout=1, session=session)
    with pytest.raises(TransportError, match=r"^sandbox POST rotate-keys: ConnectionError"):
        unresolved.rotate_keys()
    assert session.sent == 4  # a name that does not resolve (yet) is tried after each pause


def test_identify_asks_a_closed_port_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    with pytest.raises(TransportError, match=r"\(connection refused\)"):
        identity.identify("http://127.0.0.1:9", timeout=2)
    assert pauses == []


def test_a_refused_connection_is_one_answer_said_at_once(sandbox: Sandbox) -> None:
    """Whatever else is set, `authzkit authorize` at a closed port: one line naming the URL,
    exit 1, no retries (ECONNREFUSED on a name that resolved is an answer)."""
    url = "http://127.0.0.1:9"
    assert sandbox.client_secret is not None
    with_credentials = {
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
    }
    ours = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    for extra in ({}, with_credentials):
        done = subprocess.run(
            [sys.executable, "-m", "authzkit", "authorize", "read"],
            env={**ours, "AUTHZKIT_BASE_URL": url, **extra},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stderr) == (
            1,
            f"authzkit authorize: no answer from {url} (connection refused): "
            "is AUTHZKIT_BASE_URL right, and the service up?\n",
        )


def test_a_call_whose_connection_broke_is_sent_again_only_when_it_is_a_get(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rotation that may have reached the sandbox is not repeated; a GET is."""
    monkeypatch.setattr(identity, "RETRY_PAUSES_S", (0.01, 0.01))
    service = FakeService().start()  # reads each request, closes without a word
    for path in ("/sandbox/v1/rotate-keys", "/sandbox/v1/stats"):
        service.script(path, Reply(200, drop=True))
    admin = SandboxAdmin(service.base_url, timeout=2)

    def accepted() -> int:
        return sum(len(seen) for seen in service.requests.values())

    try:
        with pytest.raises(TransportError, match=r"^sandbox POST rotate-keys: ConnectionError"):
            admin.rotate_keys()
        assert accepted() == 1
        with pytest.raises(TransportError, match=r"^sandbox GET stats: ConnectionError"):
            admin.stats()
        assert accepted() == 4
    finally:
        service.stop()


class Stats(BaseHTTPRequestHandler):
    """``/sandbox/v1/stats`` and ``/sandbox/v1/world`` of a sandbox (the world: its identity)."""

    def do_GET(self) -> None:
        found = {SANDBOX_IDENTITY: {"dialect": "draft"}} if self.path.endswith("/world") else {}
        answer = json.dumps(found or {"tokens_issued": 7}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("call", ["admin", "identify"])
def test_a_sandbox_whose_name_resolves_a_moment_later_is_reached(
    call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container network's DNS drops lookups while others join: an admin call, and the
    first question of all (is it a sandbox?), are sent again."""
    server = HTTPServer(("127.0.0.1", 0), Stats)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    known_from = time.monotonic() + 0.3
    resolve = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "sandbox.test":  # like aardvark-dns while the network changes
            if time.monotonic() < known_from:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            host = "127.0.0.1"
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    try:
        url = f"http://sandbox.test:{server.server_address[1]}"
        if call == "admin":
            assert SandboxAdmin(url, timeout=2).stats() == {"tokens_issued": 7}
        else:
            assert identity.identify(url, timeout=2) == {SANDBOX_IDENTITY: {"dialect": "draft"}}
    finally:
        server.shutdown()
        server.server_close()


def test_the_openapi_document_is_served(sandbox: Sandbox) -> None:
    response = requests.get(sandbox.base_url + "/openapi.json", timeout=5)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "/resources/v1/authorization/actions/authorize" in response.json()["paths"]
