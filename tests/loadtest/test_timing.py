"""The open model's plain authorize: pre-built bytes on a kept-alive connection, timed from
its intended start, rebuilt when the access token changes, against a scripted server (the
answers a real service may give: a length, chunks, a close) and a real sandbox."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from authzkit.client.facade import AuthzClient
from authzkit.client.transport import RequestsTransport
from authzkit.loadtest.record.data import SENT_BYTES
from authzkit.loadtest.record.direct import DirectTransport
from authzkit.loadtest.record.keepalive import KeptAlive
from authzkit.loadtest.record.timing import SERVICE_MS, OpenAuthorize
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.config import Settings
from authzkit.wire.errors import TransportError
from authzkit.wire.spec import DEFAULT_PLAIN_ACTION

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
REFUSED = b'HTTP/1.1 403 Forbidden\r\ncontent-length: 29\r\n\r\n{"type": "srn:error:denied"}\n'
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
CLOSED = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{}"


class Scripted:
    """A server answering each request with the next of ``answers``; keeps what it read,
    and how many connections it accepted. ``close_after`` closes a connection after that
    many answers (a server ending kept-alive connections)."""

    def __init__(self, answers: list[bytes], close_after: int = 0) -> None:
        self.answers = list(answers)
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/api/v1/authorize"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            served = 0
            with conn:
                buffer = b""
                while self.answers:
                    while b"\r\n\r\n" not in buffer:
                        more = conn.recv(65536)
                        if not more:
                            break
                        buffer += more
                    if b"\r\n\r\n" not in buffer:
                        break
                    head, _, rest = buffer.partition(b"\r\n\r\n")
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                    while len(rest) < length:
                        rest += conn.recv(65536)
                    self.requests.append(head + b"\r\n\r\n" + rest[:length])
                    buffer = rest[length:]
                    answer = self.answers.pop(0)
                    conn.sendall(answer)
                    served += 1
                    if b"Connection: close" in answer or served == self.close_after:
                        break

    def close(self) -> None:
        self.server.close()


@dataclass
class Token:
    value: str
    serial: int = 1


class Provider:
    """A token provider whose token the test changes (as a refresh would)."""

    def __init__(self) -> None:
        self.token = Token("first-token")
        self.credentials = self

    def access_token(self, transport: Any = None) -> Token:
        return self.token

    def secrets(self) -> list[Any]:
        return []


@pytest.fixture
def fired() -> list[dict[str, Any]]:
    return []


def open_call(url: str, fired: list[dict[str, Any]], provider: Any = None) -> OpenAuthorize:
    return OpenAuthorize(
        base_url=url.removesuffix("/api/v1/authorize"),
        request={"resource_id": "r1", "resource_type": "account", "subject_token": "s"},
        action="read",
        token_provider=provider or Provider(),  # type: ignore[arg-type]
        transport=RequestsTransport(requests.Session(), timeout=2),  # the provider's
        fire=lambda **row: fired.append(row),
        timeout=2,
        tls=None,
        secrets=list,
    )


@pytest.fixture
def server() -> Iterator[Scripted]:
    found = Scripted([OK, REFUSED, CHUNKED, OK])
    yield found
    found.close()


def test_one_connection_one_row_per_call_timed_from_the_intended_start(
    server: Scripted, fired: list[dict[str, Any]]
) -> None:
    call = open_call(server.url, fired)
    told: list[tuple[float, float]] = []
    intended_at = time.perf_counter() - 0.25
    assert call(intended_at, lambda *times: told.append(times)) is None  # a 200: unread
    [row] = fired
    assert (row["request_type"], row["name"], row["exception"]) == ("POST", "authorize", None)
    assert row["response_time"] - row["context"][SERVICE_MS] >= 250.0
    assert row["context"][SENT_BYTES] == len(call.body) and row["response_length"] == 2
    [(when, on_wire)] = told
    assert when == intended_at and on_wire - intended_at >= 0.25
    refused = call(time.perf_counter(), None)
    assert refused is not None and refused.status == 403
    assert refused.headers["Content-Length"] == "29"
    assert str(fired[-1]["exception"]).startswith("HTTP 403 srn:error:denied")
    assert call(None) is None and call(None) is None  # a chunked answer, then a 200 again
    assert server.connections == 1 and len(fired) == 4
    request = server.requests[0]
    assert request.startswith(b"POST " + call.wire.target.encode() + b" HTTP/1.1\r\n")
    assert b"Authorization: Bearer first-token\r\n" in request
    assert request.endswith(call.body)
    call.close()


def test_the_request_is_built_again_when_the_access_token_changes(
    server: Scripted, fired: list[dict[str, Any]]
) -> None:
    provider = Provider()
    call = open_call(server.url, fired, provider)
    call(None)
    provider.token = Token("refreshed-token", serial=2)
    call(None)
    assert b"Bearer first-token" in server.requests[0]
    assert b"Bearer refreshed-token" in server.requests[1]
    call.close()


def test_a_connection_the_server_closed_is_replaced(fired: list[dict[str, Any]]) -> None:
    server = Scripted([OK, CLOSED, OK, OK], close_after=1)
    call = open_call(server.url, fired)
    for _ in range(4):
        assert call(None) is None
    assert server.connections == 4 and [row["exception"] for row in fired] == [None] * 4
    assert fired[1]["response_length"] == 2  # a body ended by the close
    server.close()
    call.close()


def test_no_answer_is_a_transport_error_and_a_failed_row(fired: list[dict[str, Any]]) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    call = open_call(f"http://127.0.0.1:{port}/api/v1/authorize", fired)
    told: list[tuple[float, float]] = []
    with pytest.raises(TransportError, match="authorize: cannot reach"):
        call(time.perf_counter(), lambda *times: told.append(times))
    [row] = fired
    assert isinstance(row["exception"], TransportError) and row["response_length"] == 0
    assert len(told) == 1  # counted as sent all the same


def test_a_request_against_the_sandbox_is_authorized(
    sandbox_process: SandboxProcess, fired: list[dict[str, Any]]
) -> None:
    settings = Settings.from_env(sandbox_process.env(), dotenv=None)
    transport = DirectTransport(fire=lambda **row: fired.append(row), timeout=5, concurrency=1)
    client = AuthzClient.from_env(settings, session=transport)
    admin = sandbox_process.admin()
    resource = next(r for r in admin.world()["resources"] if r["owner"] == "alice")
    call = OpenAuthorize(
        base_url=sandbox_process.base_url,
        request={
            "resource_id": resource["id"],
            "resource_type": resource["type"],
            "subject_token": admin.session_token("alice", ttl=600),
        },
        action=DEFAULT_PLAIN_ACTION,
        token_provider=client.token_provider,
        transport=client.transport,
        fire=lambda **row: fired.append(row),
        timeout=5,
        tls=None,
        secrets=list,
    )
    assert call(time.perf_counter()) is None and call(None) is None
    assert [row["name"] for row in fired] == ["token", "authorize", "authorize"]
    assert all(row["exception"] is None for row in fired)
    assert len(call.wire._idle) == 1  # one kept-alive connection for both
    call.close()
    transport.close()


def test_kept_alive_requests_say_their_length_and_host() -> None:
    wire = KeptAlive("http://authz.example:8080/api/v1/authorize?x=1", timeout=1)
    request = wire.request_bytes("POST", {"Accept": "application/json"}, b"{}")
    assert request == (
        b"POST /api/v1/authorize?x=1 HTTP/1.1\r\nHost: authz.example:8080\r\n"
        b"Accept: application/json\r\nContent-Length: 2\r\n\r\n{}"
    )
