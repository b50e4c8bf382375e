"""The client against the sandbox speaking the provider's published dialect: the OpenID
Connect token endpoint (each client authentication), published bodies, the bare 401."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from authzkit import (
    Authorized,
    TokenRequestError,
    UnauthenticatedError,
    UnauthorizedError,
)
from authzkit.client.facade import AuthzClient
from authzkit.sandbox import Sandbox
from authzkit.wire.clock import ManualClock
from authzkit.wire.jwe import KeyPair

from support.sandboxes import PUBLISHED_TOKEN_TTL as TOKEN_TTL  # the expiry test passes it
from support.subjects import Subject, subject_of

PLAIN = "show_account_balance_public"
THREADS = 16


@pytest.fixture
def subject(published_sandbox: Sandbox) -> Subject:
    """Alice with a session that outlives the sandbox clock's jumps (its access tokens
    live TOKEN_TTL seconds, and a session lives as long unless told)."""
    alice = subject_of(published_sandbox, "alice")
    return Subject(
        alice.id,
        published_sandbox.session_token("alice", ttl=3600),
        alice.resource_id,
        alice.foreign_resource_id,
        alice.credentials,
    )


def client_of(sandbox: Sandbox, **options: Any) -> AuthzClient:
    """A client as connect() wires it: the issuer, private_key_jwt, the demo key."""
    if "client_auth" not in options or options["client_auth"] == "private_key_jwt":
        options.setdefault("client_key", sandbox.client_key_pem)
    return AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        issuer=sandbox.issuer,
        **options,
    )


@pytest.mark.parametrize(
    "client_auth", ["private_key_jwt", "client_secret_post", "client_secret_basic"]
)
def test_every_client_authentication_gets_a_token(
    published_sandbox: Sandbox, subject: Subject, client_auth: str
) -> None:
    with client_of(published_sandbox, client_auth=client_auth) as client:
        outcome = client.authorize(
            PLAIN, resource_id=subject.resource_id, subject_token=subject.token
        )
        assert isinstance(outcome, Authorized) and outcome.response is None
        assert isinstance(outcome.id, str) and outcome.shape == "A"
        assert client.token_provider.token_url == published_sandbox.token_url
    assert published_sandbox.stats()["tokens_issued"] == 1


@pytest.mark.parametrize("action", ["transfer_funds", "change_contact_details", "close_account"])
def test_challenge_round_trips(published_sandbox: Sandbox, subject: Subject, action: str) -> None:
    with client_of(published_sandbox) as client:
        outcome = client.authorize_with_challenge(
            action,
            answers=subject.answers(),
            resource_id=subject.resource_id,
            subject_token=subject.token,
        )
        assert outcome.authorized and outcome.response is None


def test_someone_elses_resource(published_sandbox: Sandbox, subject: Subject) -> None:
    with client_of(published_sandbox) as client, pytest.raises(UnauthorizedError) as caught:
        client.authorize(
            PLAIN, resource_id=subject.foreign_resource_id, subject_token=subject.token
        )
    assert caught.value.status == 403


def test_an_unregistered_key_is_refused_once(published_sandbox: Sandbox) -> None:
    stranger = KeyPair.generate(use="sig", size=2048).private_pem()
    with client_of(published_sandbox, client_key=stranger) as client:
        with pytest.raises(TokenRequestError) as caught:
            client.access_token()
        assert client.token_provider.token_calls == 1
    assert caught.value.status == 400 and caught.value.type == "invalid_client"


def test_20_calls_with_an_invalid_subject(published_sandbox: Sandbox, subject: Subject) -> None:
    with client_of(published_sandbox) as client:
        client.access_token()
        for _ in range(20):
            with pytest.raises(UnauthenticatedError):
                client.authorize(
                    PLAIN, resource_id=subject.resource_id, subject_token="not-a-session-token"
                )
        assert client.authorize(
            PLAIN, resource_id=subject.resource_id, subject_token=subject.token
        ).authorized
    assert published_sandbox.stats()["tokens_issued"] <= 2


def test_16_threads_crossing_an_early_expiry(published_sandbox: Sandbox, subject: Subject) -> None:
    # The client's clock (the system's) says its token is fresh; the sandbox's says expired.
    with client_of(published_sandbox) as client:
        client.access_token()
        sandbox_clock = published_sandbox.clock
        assert isinstance(sandbox_clock, ManualClock), "the sandbox runs on its own clock"
        sandbox_clock.advance(TOKEN_TTL + 1)
        barrier = threading.Barrier(THREADS)
        outcomes: list[Any] = []
        errors: list[Exception] = []

        def worker() -> None:
            barrier.wait()
            try:
                outcomes.append(
                    client.authorize(
                        PLAIN, resource_id=subject.resource_id, subject_token=subject.token
                    )
                )
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == [] and len(outcomes) == THREADS
        assert all(o.authorized for o in outcomes)
    assert published_sandbox.stats()["tokens_issued"] == 2
