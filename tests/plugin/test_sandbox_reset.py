"""What the plugin needs from the sandbox: a full reset and a record of what it received,
in-process (``Sandbox``) and over HTTP (``POST /sandbox/v1/reset``,
``GET /sandbox/v1/received``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from authzkit.client.facade import AuthzClient
from authzkit.sandbox import Sandbox, SandboxAdmin
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import AuthzError, UnauthenticatedError

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"
PLAIN = "show_account_balance_public"


@pytest.fixture(scope="module")
def recording() -> Iterator[Sandbox]:
    with Sandbox(
        key_size=2048, record=True, clock=ManualClock(1_000_000.0), token_outage=30
    ) as sandbox:
        yield sandbox


@pytest.fixture
def fresh(recording: Sandbox) -> Sandbox:
    recording.reset(sessions=True, faults=True, record=True)
    return recording


def client_of(sandbox: Sandbox) -> AuthzClient:
    return AuthzClient(
        base_url=sandbox.base_url, client_id=sandbox.client_id, client_secret=sandbox.client_secret
    )


def test_it_records_what_it_answered_with_secrets_masked(fresh: Sandbox) -> None:
    token = fresh.session_token("alice")
    fresh.clock.advance(31)  # type: ignore[attr-defined]  # past the token outage
    with client_of(fresh) as client:
        client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)
    received = fresh.received()
    assert [(r.endpoint, r.status) for r in received] == [("token", 200), ("authorize", 200)]
    authorize = received[1]
    assert authorize.subject == "alice"
    assert authorize.request_body["action"]["name"] == PLAIN
    text = repr(received)
    assert token not in text and token[-10:] not in text
    assert fresh.client_secret is not None and fresh.client_secret not in text
    assert authorize.request_headers["Authorization"].endswith("****")


def test_a_reset_forgets_sessions_counters_record_and_restarts_faults(fresh: Sandbox) -> None:
    token = fresh.session_token("alice")
    fresh.clock.advance(31)  # type: ignore[attr-defined]
    with client_of(fresh) as client:
        client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)
        fresh.reset(sessions=True, faults=True)
        assert fresh.received() == [] and fresh.stats()["authorize"] == {}
        assert fresh.fault_counts() == {}
        # the outage counts from the reset again: no new token for 30 s
        with pytest.raises(AuthzError):
            client_of(fresh).access_token()
        fresh.clock.advance(31)  # type: ignore[attr-defined]
        with pytest.raises(UnauthenticatedError):
            client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)
        client.authorize(
            PLAIN, resource_id=ALICE_ACCOUNT, subject_token=fresh.session_token("alice")
        )


def test_a_plain_reset_keeps_sessions_as_before(fresh: Sandbox) -> None:
    token = fresh.session_token("alice")
    fresh.clock.advance(31)  # type: ignore[attr-defined]
    fresh.reset()
    with client_of(fresh) as client:
        client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)


def test_over_http(fresh: Sandbox) -> None:
    admin = SandboxAdmin(fresh.base_url)
    fresh.clock.advance(31)  # type: ignore[attr-defined]
    token = admin.session_token("alice")
    with client_of(fresh) as client:
        client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)
    assert [r.endpoint for r in admin.received()] == ["token", "authorize"]
    admin.reset(record=False)
    assert admin.received() == [] and admin.stats()["authorize"] == {}
    fresh.clock.advance(31)  # type: ignore[attr-defined]  # the outage began again
    with client_of(fresh) as client, pytest.raises(UnauthenticatedError):
        client.authorize(PLAIN, resource_id=ALICE_ACCOUNT, subject_token=token)
    assert admin.received() == []  # recording is off now
    admin.reset(record=True)
    assert fresh.recording


def test_a_bad_reset_body_is_a_400_naming_the_field(fresh: Sandbox) -> None:
    response = requests.post(
        fresh.base_url + "/sandbox/v1/reset", json={"record": "yes"}, timeout=10
    )
    assert response.status_code == 400
    assert response.json()["field"] == "request_body.record"


def test_recording_is_off_unless_asked() -> None:
    with Sandbox(key_size=2048) as sandbox:
        assert not sandbox.recording
        with client_of(sandbox) as client:
            client.access_token()
        assert sandbox.received() == []
