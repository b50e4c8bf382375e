"""The Fast users' and the open model's transport (geventhttpclient straight) against a
real sandbox process.

It replaces Locust's session for those users, so it must report exactly what a Locust
session would: one request event per request, challenge 403s a success, every other
refusal a failure named by the service's error type, and the scheduled ``authorize`` timed
from its intended start with the service time kept beside it. No locust here: the events
are recorded by a plain ``fire`` callable.
"""

from __future__ import annotations

import copy
import socket
import time
from typing import Any

import pytest
from geventhttpclient.connectionpool import SSLConnectionPool

from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.client.transport import PreparedSender
from authzkit.loadtest.record.direct import DirectTransport, RequestFailure
from authzkit.loadtest.record.timing import SERVICE_MS, Scheduled
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import free_port
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, TransportError
from authzkit.wire.spec import AUTHORIZE_PATH, DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION


class Events:
    """Stands in for Locust's request event: keeps every firing's keyword arguments."""

    def __init__(self) -> None:
        self.fired: list[dict[str, Any]] = []

    def fire(self, **kwargs: Any) -> None:
        self.fired.append(kwargs)

    def named(self, name: str) -> list[dict[str, Any]]:
        return [event for event in self.fired if event["name"] == name]


@pytest.fixture
def events() -> Events:
    return Events()


def client_for(sandbox: SandboxProcess, transport: DirectTransport) -> AuthzClient:
    settings = Settings.from_env(sandbox.env(), dotenv=None)
    return AuthzClient.from_env(settings, session=transport)


def alice(sandbox: SandboxProcess) -> dict[str, Any]:
    admin = sandbox.admin()
    resource = next(r for r in admin.world()["resources"] if r["owner"] == "alice")
    return {
        "resource_id": resource["id"],
        "resource_type": resource["type"],
        "subject_token": admin.session_token("alice", ttl=600),
    }


def test_a_scheduled_authorize_is_timed_from_its_intended_start(
    sandbox_process: SandboxProcess, events: Events
) -> None:
    transport = DirectTransport(fire=events.fire, timeout=5, concurrency=4)
    client = client_for(sandbox_process, transport)
    told: list[tuple[float, float]] = []
    intended_at = time.perf_counter() - 0.25  # this call is 250 ms behind its intended start
    call = copy.copy(client)
    call.transport = Scheduled(transport, intended_at, lambda *times: told.append(times))
    outcome = call.authorize(DEFAULT_PLAIN_ACTION, **alice(sandbox_process))
    assert isinstance(outcome, Authorized)
    [token] = events.named("token")
    assert token["exception"] is None and token["request_type"] == "POST"
    [authorize] = events.named("authorize")
    service = authorize["context"][SERVICE_MS]
    assert authorize["exception"] is None and authorize["response_length"] > 0
    assert authorize["response_time"] - service >= 250.0
    [(when, sent_at)] = told
    assert when == intended_at and sent_at - intended_at >= 0.25
    # the lag belongs to the scheduled request only: the next one is not shifted
    call.authorize(DEFAULT_PLAIN_ACTION, **alice(sandbox_process))
    second = events.named("authorize")[1]
    assert second["response_time"] == second["context"][SERVICE_MS]
    transport.close()


def test_a_challenge_is_a_success_and_a_refusal_a_named_failure(
    sandbox_process: SandboxProcess, events: Events
) -> None:
    transport = DirectTransport(fire=events.fire, timeout=5, concurrency=4)
    client = client_for(sandbox_process, transport)
    subject = alice(sandbox_process)
    outcome = client.authorize(DEFAULT_CHALLENGE_ACTION, **subject)
    assert isinstance(outcome, ChallengeRequired)
    assert events.named("authorize")[-1]["exception"] is None
    with pytest.raises(AuthzError):
        client.authorize(DEFAULT_PLAIN_ACTION, **{**subject, "resource_id": "no-such-account"})
    failure = events.named("authorize")[-1]["exception"]
    assert isinstance(failure, RequestFailure)
    assert str(failure).startswith("HTTP 403 srn:error:"), failure
    transport.close()


def test_no_answer_is_a_transport_error_and_a_failed_row(events: Events) -> None:
    transport = DirectTransport(fire=events.fire, timeout=2, concurrency=1)
    url = f"http://127.0.0.1:{free_port()}/authorize"  # nothing listens there
    with pytest.raises(TransportError, match="authorize: cannot reach"):
        transport.request("POST", url, name="authorize", json_body={"action": "x"})
    [row] = events.fired
    assert isinstance(row["exception"], TransportError) and row["response_length"] == 0


def test_response_headers_are_case_insensitive(
    sandbox_process: SandboxProcess, events: Events
) -> None:
    transport = DirectTransport(fire=events.fire, timeout=5, concurrency=1)
    answer = transport.request("GET", f"{sandbox_process.base_url}/sandbox/v1/world", name="world")
    assert answer.status == 200
    assert answer.headers.get("content-type", "").startswith("application/json")
    assert answer.headers["Content-Type"] == answer.headers.get("CONTENT-TYPE")
    assert "content-type" in {key.lower() for key in answer.headers}
    transport.close()


def test_a_closed_loop_request_reports_its_own_time_with_locusts_fields(
    sandbox_process: SandboxProcess, events: Events
) -> None:
    """The Fast users' transport: no schedule, so a row's time is the service time; the
    event carries what Locust's own sessions give a listener."""
    transport = DirectTransport(fire=events.fire, timeout=5, concurrency=1)
    client = client_for(sandbox_process, transport)
    before = time.time()
    outcome = client.authorize(DEFAULT_PLAIN_ACTION, **alice(sandbox_process))
    assert isinstance(outcome, Authorized)
    [authorize] = events.named("authorize")
    assert authorize["response_time"] == authorize["context"][SERVICE_MS] > 0
    assert authorize["url"] == sandbox_process.base_url + AUTHORIZE_PATH
    assert before <= authorize["start_time"] <= time.time()
    assert authorize["exception"] is None and authorize["response_length"] > 0
    transport.close()


def test_a_prepared_authorize_is_sent_as_prepared(
    sandbox_process: SandboxProcess, events: Events
) -> None:
    transport = DirectTransport(fire=events.fire, timeout=5, concurrency=1)
    assert isinstance(transport, PreparedSender)
    client = client_for(sandbox_process, transport)
    prepared = client.prepare_authorize(DEFAULT_PLAIN_ACTION, **alice(sandbox_process))
    assert prepared().authorized and prepared.response().status == 200
    refused = client.prepare_authorize(
        DEFAULT_PLAIN_ACTION, **{**alice(sandbox_process), "resource_id": "no-such-account"}
    )
    with pytest.raises(AuthzError):
        refused()
    rows = events.named("authorize")
    assert [row["exception"] is None for row in rows] == [True, True, False]
    assert str(rows[-1]["exception"]).startswith("HTTP 403 srn:error:")
    transport.close()


def test_a_silent_service_fails_the_row_after_the_timeout(events: Events) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        transport = DirectTransport(fire=events.fire, timeout=0.3, concurrency=1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/api/v1/authorize"
        with pytest.raises(TransportError, match=r"authorize: cannot reach .*: TimeoutError"):
            transport.request("POST", url, name="authorize", json_body={"action": "x"})
    [row] = events.fired
    assert isinstance(row["exception"], TransportError) and row["response_length"] == 0
    transport.close()


def test_a_fast_users_settings_reach_its_connection_pool(events: Events) -> None:
    """``FastHttpUser``'s ``insecure``, ``concurrency`` and timeouts, as the Fast users pass
    them (no TLS handshake here: the pool is built before any connection)."""
    transport = DirectTransport(
        fire=events.fire, timeout=2.5, connection_timeout=1.5, concurrency=3, insecure=True
    )
    client, target = transport._route("https://authz.example/api/v1/authorize?x=1")
    pool = client._connection_pool
    assert isinstance(pool, SSLConnectionPool), "an https route has no TLS pool"
    assert (pool.insecure, pool.size, pool.connection_timeout, pool.network_timeout) == (
        True,
        3,
        1.5,
        2.5,
    )
    assert target == "/api/v1/authorize?x=1"
    transport.close()
