"""The 401 policy against a service that answers every 401 with the same bare
``{"type": "srn:error:unauthenticated"}`` (the published dialect): an expired access token
and an invalid subject session look alike, and the client tells them apart by one refresh."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from authzkit import Authorized, UnauthenticatedError
from authzkit.client.facade import AuthzClient
from authzkit.client.unauthenticated import AMBIGUOUS, SUBJECT, SubjectSessions, whose_401
from authzkit.wire.clock import ManualClock

from support.fake_service import AUTHORIZE, TOKEN, FakeService, PublishedService, Reply, client_key

VALID = "valid-subject-session-token-0123456789"
INVALID = "revoked-subject-session-token-9876543210"
THREADS = 16


@pytest.fixture
def refusing_published_fake() -> Iterator[PublishedService]:
    fake = FakeService().start()
    try:
        service = PublishedService(fake)
        service.invalid_subjects.add(INVALID)
        yield service
    finally:
        fake.stop()


def published_client(service: PublishedService, **options: Any) -> AuthzClient:
    return AuthzClient(
        base_url=service.fake.base_url,
        client_id=service.CLIENT_ID,
        issuer=service.issuer,
        client_key=client_key().private_pem(),
        clock=ManualClock(),
        timeout=5,
        **options,
    )


def authorize(client: AuthzClient, subject_token: str) -> Authorized:
    outcome = client.authorize(
        "show_account_balance_public", resource_id="r", subject_token=subject_token
    )
    assert isinstance(outcome, Authorized)
    return outcome


def in_threads(count: int, work: Callable[[], Any]) -> tuple[list[Any], list[BaseException]]:
    """Run ``work`` in ``count`` threads released together; what they returned and raised."""
    barrier = threading.Barrier(count)
    results: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(work())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results, errors


def test_20_calls_with_an_invalid_subject_cost_one_token_call(
    refusing_published_fake: PublishedService,
) -> None:
    with published_client(refusing_published_fake) as client:
        client.access_token()
        assert refusing_published_fake.token_calls == 1
        errors = []
        for _ in range(20):
            with pytest.raises(UnauthenticatedError) as caught:
                authorize(client, INVALID)
            errors.append(caught.value)
        assert len(errors) == 20 and all(e.status == 401 for e in errors)
        assert (
            refusing_published_fake.token_calls == 2
        )  # the one refresh that proved it the subject's
        # 20 requests and the one retry: later calls raise at the first 401
        assert len(refusing_published_fake.fake.requests[AUTHORIZE]) == 21
        assert "newer access token was refused" in str(errors[0])
        # the subject's session is remembered; the valid subject is not affected
        assert authorize(client, VALID).action == "show_account_balance_public"
        assert refusing_published_fake.token_calls == 2


def test_a_valid_subject_still_gets_its_refresh_after_an_early_expiry(
    refusing_published_fake: PublishedService,
) -> None:
    with published_client(refusing_published_fake) as client:
        with pytest.raises(UnauthenticatedError):
            authorize(client, INVALID)
        refusing_published_fake.expire_tokens()  # the service drops the token early (clock skew)
        calls = refusing_published_fake.token_calls
        assert authorize(client, VALID).authorized
        assert refusing_published_fake.token_calls == calls + 1
        with pytest.raises(UnauthenticatedError):  # still remembered: no token call
            authorize(client, INVALID)
        assert refusing_published_fake.token_calls == calls + 1


def test_16_threads_crossing_an_early_expiry_cause_one_token_call(
    refusing_published_fake: PublishedService,
) -> None:
    with published_client(refusing_published_fake) as client:
        client.access_token()
        refusing_published_fake.expire_tokens()
        results, errors = in_threads(THREADS, lambda: authorize(client, VALID))
        assert errors == [] and len(results) == THREADS
        assert refusing_published_fake.token_calls == 2
        assert client.token_provider.refreshes == 1


def test_16_threads_sharing_an_invalid_subject_cause_one_refresh(
    refusing_published_fake: PublishedService,
) -> None:
    with published_client(refusing_published_fake) as client:
        client.access_token()

        def five_calls() -> int:
            refused = 0
            for _ in range(5):
                try:
                    authorize(client, INVALID)
                except UnauthenticatedError:
                    refused += 1
            return refused

        results, errors = in_threads(THREADS, five_calls)
        assert errors == [] and results == [5] * THREADS
        assert refusing_published_fake.token_calls == 2


def test_clients_sharing_a_provider_share_what_it_learned(
    refusing_published_fake: PublishedService,
) -> None:
    with (
        published_client(refusing_published_fake) as first,
        AuthzClient(
            base_url=refusing_published_fake.fake.base_url, token_provider=first.token_provider
        ) as second,
    ):
        with pytest.raises(UnauthenticatedError):
            authorize(first, INVALID)
        calls = refusing_published_fake.token_calls
        with pytest.raises(UnauthenticatedError):
            authorize(second, INVALID)
        assert refusing_published_fake.token_calls == calls
        assert len(refusing_published_fake.fake.requests[AUTHORIZE]) == 3


def test_a_401_naming_the_subject_token_is_final_at_once(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(401, {"type": "srn:error:unauthenticated", "field": "request_body.subject.token"}),
    )
    with pytest.raises(UnauthenticatedError):
        fake_client.authorize("a", resource_id="r", subject_token="draft-subject")
    assert len(fake.requests[AUTHORIZE]) == 1 and len(fake.requests[TOKEN]) == 1


def test_an_ambiguous_401_then_success_is_not_remembered(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(401, {"type": "srn:error:unauthenticated"}),
        Reply(200, {"action": {"name": "a", "status": "authorized"}, "id": 0}),
    )
    outcome = fake_client.authorize("a", resource_id="r", subject_token="some-subject")
    assert isinstance(outcome, Authorized) and outcome.id == 0
    sessions = fake_client.token_provider.sessions
    key = sessions.key("some-subject")
    assert not sessions.is_invalid(key) and len(sessions) == 0
    assert sessions.refused(key, 99) is False  # no suspicion was left behind


@pytest.mark.parametrize(
    "body, verdict",
    [
        ({"type": "srn:error:unauthenticated"}, AMBIGUOUS),
        ({"type": "srn:error:unauthenticated", "field": "request_body.subject.token"}, SUBJECT),
        ({"type": "srn:error:unauthenticated", "field": "headers.Authorization"}, "access token"),
        ({"type": "srn:error:invalid_token"}, "access token"),
        ({}, "access token"),
        (None, "access token"),
    ],
)
def test_whose_401(body: Any, verdict: str) -> None:
    assert whose_401(body) == verdict


def test_the_memory_is_bounded_and_keeps_no_token() -> None:
    sessions = SubjectSessions(limit=3)
    keys = [sessions.key(f"subject-session-{n}") for n in range(5)]
    for key in keys:
        assert sessions.refused(key, 1) is False
        assert sessions.refused(key, 2) is True
    assert len(sessions) == 3
    assert [sessions.is_invalid(k) for k in keys] == [False, False, True, True, True]
    assert sessions.refused(keys[2], 1) is True  # known invalid whatever the token
    assert "subject-session" not in repr(vars(sessions)) + repr(sessions)
