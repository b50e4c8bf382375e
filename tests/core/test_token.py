"""Access tokens: lifetime from every issuance, proportional margin, single-flight, retries."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
import requests

from authzkit import AccessTokenRejectedError, TokenRequestError
from authzkit.client.facade import AuthzClient
from authzkit.client.token import TokenProvider, refresh_margin
from authzkit.client.transport import RequestsTransport
from authzkit.wire.clock import ManualClock

from support.fake_service import AUTHORIZE, TOKEN, FakeService, Reply
from support.subjects import Subject


def _token_reply(value: str, expires_in: Any) -> Reply:
    return Reply(200, {"accessToken": value, "expiresIn": expires_in, "tokenType": "Bearer"})


def _provider(
    base_url: str, clock: ManualClock, sleeps: list[float] | None = None, timeout: float = 5.0
) -> TokenProvider:
    return TokenProvider(
        auth_url=base_url,
        client_id="c",
        client_secret="s3cr3t-value",
        transport=RequestsTransport(requests.Session(), timeout=timeout),
        clock=clock,
        sleep=(sleeps.append if sleeps is not None else None),
    )


@pytest.mark.parametrize(
    "lifetime, margin", [(3600, 60), (900, 60), (240, 60), (100, 25), (4, 1), (1, 0.25)]
)
def test_margin_is_proportional_for_short_lifetimes(lifetime: float, margin: float) -> None:
    assert refresh_margin(lifetime) == margin


def test_four_second_token_is_reused_then_refreshed_before_expiry(fake: FakeService) -> None:
    clock = ManualClock()
    fake.script(
        TOKEN,
        _token_reply("first-token-aaaaaaaaaaaaaaaaaaaa", 4),
        _token_reply("second-token-bbbbbbbbbbbbbbbbbbb", 4),
    )
    provider = _provider(fake.base_url, clock)
    assert {provider.token() for _ in range(50)} == {"first-token-aaaaaaaaaaaaaaaaaaaa"}
    clock.advance(2.9)
    assert provider.token() == "first-token-aaaaaaaaaaaaaaaaaaaa"
    clock.advance(0.1)  # 3 s: one second (a quarter) before expiry
    assert provider.token() == "second-token-bbbbbbbbbbbbbbbbbbb"
    assert (provider.token_calls, provider.refreshes) == (2, 1)


def test_lifetime_is_read_on_every_issuance(fake: FakeService) -> None:
    clock = ManualClock()
    fake.script(
        TOKEN,
        _token_reply("long-lived-token-ccccccccccccccc", 900),
        _token_reply("short-lived-token-dddddddddddddd", "20"),
        _token_reply("third-token-eeeeeeeeeeeeeeeeeeeee", 900),
    )
    provider = _provider(fake.base_url, clock)
    provider.token()
    clock.advance(840)
    assert provider.token() == "short-lived-token-dddddddddddddd"
    assert provider.lifetime == 20
    clock.advance(14)
    assert provider.token() == "short-lived-token-dddddddddddddd"
    clock.advance(1)  # 15 s of 20: the margin is 5 s
    assert provider.token() == "third-token-eeeeeeeeeeeeeeeeeeeee"


@pytest.mark.parametrize(
    "body",
    [
        {"expiresIn": 900},
        {"accessToken": "t", "expiresIn": 0},
        {"accessToken": "t"},
        ["not", "an", "object"],
    ],
)
def test_malformed_token_response_is_a_clear_error(fake: FakeService, body: Any) -> None:
    fake.script(TOKEN, Reply(200, body))
    with pytest.raises(TokenRequestError, match="token"):
        _provider(fake.base_url, ManualClock()).token()


def test_lock_is_created_lazily(fake: FakeService) -> None:
    provider = _provider(fake.base_url, ManualClock())
    assert "_lazy_lock" not in vars(provider)  # nothing made before gevent could patch
    provider.token()
    assert vars(provider)["_lazy_lock"] is provider._lock


# -- faults of the token endpoint ------------------------------------------------------------


def test_5xx_is_retried_with_backoff_then_succeeds(fake: FakeService) -> None:
    sleeps: list[float] = []
    fake.script(
        TOKEN,
        Reply(503, {"type": "srn:error:unavailable"}),
        Reply(502, "<html>bad gateway</html>", content_type="text/html"),
        _token_reply("after-retries-ffffffffffffffffffff", 900),
    )
    provider = _provider(fake.base_url, ManualClock(), sleeps)
    assert provider.token() == "after-retries-ffffffffffffffffffff"
    assert provider.token_calls == 3 and sleeps == [0.2, 0.4]


def test_persistent_5xx_gives_a_clear_final_error(fake: FakeService) -> None:
    sleeps: list[float] = []
    fake.script(TOKEN, Reply(503, {"type": "srn:error:unavailable", "detail": "maintenance"}))
    provider = _provider(fake.base_url, ManualClock(), sleeps)
    with pytest.raises(TokenRequestError) as caught:
        provider.token()
    message = str(caught.value)
    assert "after 3 attempts" in message and "503" in message and fake.base_url in message
    assert caught.value.status == 503 and len(fake.requests[TOKEN]) == 3 and len(sleeps) == 2


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    provider = _provider(f"http://127.0.0.1:{port}", ManualClock(), sleeps)
    with pytest.raises(TokenRequestError) as caught:
        provider.token()
    assert "after 3 attempts" in str(caught.value) and "cannot reach" in str(caught.value)
    assert caught.value.status is None and provider.token_calls == 3 and len(sleeps) == 2


def test_timeout_is_retried_then_reported(fake: FakeService) -> None:
    fake.script(TOKEN, Reply(200, {"accessToken": "late", "expiresIn": 900}, delay=1.0))
    provider = _provider(fake.base_url, ManualClock(), [], timeout=0.2)
    with pytest.raises(TokenRequestError, match=r"within 0\.2 s"):
        provider.token()
    assert provider.token_calls == 3


def test_dropped_connection_then_success(fake: FakeService) -> None:
    fake.script(TOKEN, Reply(200, drop=True), _token_reply("second-try-gggggggggggggggggggg", 60))
    provider = _provider(fake.base_url, ManualClock(), [])
    assert provider.token() == "second-try-gggggggggggggggggggg"


# -- 401 policy ------------------------------------------------------------------------------


def test_second_401_raises(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(AUTHORIZE, Reply(401, {"type": "srn:error:invalid_token", "status": 401}))
    with pytest.raises(AccessTokenRejectedError):
        fake_client.authorize("a", resource_id="r", subject_token="subject-token")
    assert len(fake.requests[AUTHORIZE]) == 2 and len(fake.requests[TOKEN]) == 2


def test_401_then_success_after_one_refresh(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(
        TOKEN,
        _token_reply("rejected-token-hhhhhhhhhhhhhhhhhh", 900),
        _token_reply("accepted-token-iiiiiiiiiiiiiiiiii", 900),
    )
    fake.script(
        AUTHORIZE,
        Reply(401, {"type": "srn:error:invalid_token"}),
        Reply(200, {"action": {"name": "a", "status": "authorized"}, "id": 1}),
    )
    assert fake_client.authorize("a", resource_id="r", subject_token="subject-t").authorized
    sent = [seen.headers["Authorization"] for seen in fake.requests[AUTHORIZE]]
    assert sent == [
        "Bearer rejected-token-hhhhhhhhhhhhhhhhhh",
        "Bearer accepted-token-iiiiiiiiiiiiiiiiii",
    ]


def test_rejection_of_an_already_replaced_token_does_not_refetch(fake: FakeService) -> None:
    fake.script(
        TOKEN,
        _token_reply("old-token-jjjjjjjjjjjjjjjjjjjjjjj", 900),
        _token_reply("new-token-kkkkkkkkkkkkkkkkkkkkkkk", 900),
    )
    provider = _provider(fake.base_url, ManualClock())
    old = provider.token()
    # two callers both saw their request with ``old`` rejected
    assert provider.refresh_after_rejection(old) == "new-token-kkkkkkkkkkkkkkkkkkkkkkk"
    assert provider.refresh_after_rejection(old) == "new-token-kkkkkkkkkkkkkkkkkkkkkkk"
    assert provider.token_calls == 2


# -- single-flight across expiry, 32 threads, counted by the sandbox ---------------------------

THREADS = 32


def test_32_threads_crossing_expiry_cause_one_token_call(
    sandbox: Any, clock: ManualClock, client: AuthzClient
) -> None:
    client.access_token()
    assert sandbox.stats()["tokens_issued"] == 1
    lifetime = client.token_provider.lifetime
    assert lifetime is not None, "the token call gave no lifetime"
    clock.advance(lifetime)  # every cached token is now stale
    subject = Subject("alice", sandbox.session_token("alice"), *_alice_resource(sandbox))
    barrier = threading.Barrier(THREADS)
    outcomes: list[Any] = []

    def worker() -> None:
        barrier.wait()
        outcomes.append(
            client.authorize(
                "show_account_balance_public",
                resource_id=subject.resource_id,
                subject_token=subject.token,
            )
        )

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(outcomes) == THREADS and all(o.authorized for o in outcomes)
    assert sandbox.stats()["tokens_issued"] == 2
    assert (client.token_provider.token_calls, client.token_provider.refreshes) == (2, 1)


def test_32_threads_on_a_cold_cache_with_a_short_lived_token() -> None:
    from authzkit.sandbox import Sandbox

    clock = ManualClock()
    with Sandbox(token_ttl=4, key_size=2048, clock=clock) as sandbox:
        provider_client = AuthzClient(
            base_url=sandbox.base_url,
            client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
            clock=clock,
        )
        barrier = threading.Barrier(THREADS)
        tokens: list[str] = []

        def worker() -> None:
            barrier.wait()
            for _ in range(20):
                tokens.append(provider_client.access_token())

        for round_ in range(3):  # cold, then twice across the 4 s token's refresh point
            threads = [threading.Thread(target=worker) for _ in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            assert sandbox.stats()["tokens_issued"] == round_ + 1
            clock.advance(3)
        assert len(tokens) == 3 * THREADS * 20 and len(set(tokens)) == 3
        provider_client.close()


def _alice_resource(sandbox: Any) -> tuple[str, str, dict[str, str]]:
    world = sandbox.world.to_json()
    own = next(r["id"] for r in world["resources"] if r["owner"] == "alice")
    foreign = next(r["id"] for r in world["resources"] if r["owner"] != "alice")
    return own, foreign, {}
