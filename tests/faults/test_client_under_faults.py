"""The core client under the sandbox's faults: it retries what is safe to retry, backs off,
never hangs, and says clearly what it could not do — without a secret in the message."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from authzkit.client.outcomes import Authorized
from authzkit.sandbox import Sandbox
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import AuthzError, TokenRequestError, TransportError

from support.faults import ALICE_ACCOUNT, UNAVAILABLE, Sleeps, make_client, seed_for
from support.leaks import shows

Start = Callable[..., Sandbox]
TOKEN_PATH = "/api/v3.1/oauth/tokens"
AUTHORIZE_PATH = "/resources/v1/authorization/actions/authorize"


def assert_no_secret(error: BaseException, *secrets: str | None) -> None:
    for secret in secrets:
        assert secret is not None, "no secret to look for"
        for text in (str(error), repr(error), *map(str, error.args)):
            assert not shows(secret, text)


# ---------------------------------------------------------------- token endpoint
def test_a_token_outage_is_retried_with_backoff_until_it_ends(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(token_outage=0.5, clock=clock)
    sleeps = Sleeps(clock)  # the backoff moves the shared clock: no real waiting
    client = make_client(sandbox, clock=clock, sleep=sleeps)
    assert client.access_token()
    assert sleeps.seconds == [0.2, 0.4]  # exponential backoff between the three attempts
    assert client.token_provider.token_calls == 3
    assert sandbox.fault_counts()["token_outage"] == 2


def test_a_long_token_outage_ends_in_one_clear_error_after_bounded_retries(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(token_outage=600, clock=clock)
    sleeps = Sleeps(clock)
    client = make_client(sandbox, clock=clock, sleep=sleeps)
    with pytest.raises(TokenRequestError) as caught:
        client.authorize(
            "show_account_balance_public",
            resource_id=ALICE_ACCOUNT,
            subject_token=sandbox.session_token("alice"),
        )
    error = caught.value
    assert (error.type, error.status) == (UNAVAILABLE, 503)
    message = str(error)
    assert sandbox.auth_url + TOKEN_PATH in message and "after 3 attempts" in message
    assert UNAVAILABLE in message
    assert sleeps.seconds == [0.2, 0.4]
    assert sandbox.fault_counts()["requests:token"] == 3  # bounded: no fourth call
    assert "requests:authorize" not in sandbox.fault_counts()
    assert_no_secret(error, sandbox.client_secret)


def test_the_backoff_really_waits_on_the_real_clock(faulted: Start) -> None:
    sandbox = faulted(token_outage=0.5)  # the system clock
    client = make_client(sandbox)
    started = time.monotonic()
    assert client.access_token()
    elapsed = time.monotonic() - started
    calls = client.token_provider.token_calls
    assert 1 <= calls <= 3
    # Each retry waited its backoff (0.2 s, then 0.4 s); bounds that cannot flake:
    assert elapsed >= sum(0.2 * 2**i for i in range(calls - 1))
    assert elapsed < 10


def test_a_token_endpoint_slower_than_the_timeout_never_hangs(faulted: Start) -> None:
    sandbox = faulted(latency_ms=1500)
    sleeps = Sleeps()  # backoff recorded, not slept: the time measured is the timeouts'
    client = make_client(sandbox, timeout=0.3, sleep=sleeps)
    started = time.monotonic()
    with pytest.raises(TokenRequestError) as caught:
        client.access_token()
    elapsed = time.monotonic() - started
    assert 0.8 <= elapsed < 4.0  # three 0.3 s timeouts; waiting for answers would take 4.5 s
    message = str(caught.value)
    assert "after 3 attempts" in message and "within 0.3 s" in message
    assert sandbox.auth_url + TOKEN_PATH in message
    assert caught.value.status is None and isinstance(caught.value.__cause__, TransportError)
    assert sleeps.seconds == [0.2, 0.4]
    assert_no_secret(caught.value, sandbox.client_secret)


# ---------------------------------------------------------------- authorize
def test_a_503_from_authorize_is_reported_not_retried(faulted: Start) -> None:
    # The token call is served, the authorization request is answered 503.
    sandbox = faulted(error_rate=0.5, fault_seed=seed_for(0.5, [False, True]))
    client = make_client(sandbox)
    subject_token = sandbox.session_token("alice")
    with pytest.raises(AuthzError) as caught:
        client.authorize(
            "show_account_balance_public", resource_id=ALICE_ACCOUNT, subject_token=subject_token
        )
    error = caught.value
    assert not isinstance(error, TokenRequestError)
    assert (error.type, error.status) == (UNAVAILABLE, 503)
    message = str(error)
    assert "503" in message and UNAVAILABLE in message
    assert sandbox.base_url + AUTHORIZE_PATH in message
    counts = sandbox.fault_counts()
    assert counts["requests:authorize"] == 1 and counts["requests:token"] == 1
    assert_no_secret(error, subject_token, sandbox.client_secret)


def test_a_503_on_the_solution_is_not_resent(faulted: Start) -> None:
    # token, challenge and keys are served; the request carrying the solution gets 503.
    sandbox = faulted(error_rate=0.5, fault_seed=seed_for(0.5, [False, False, False, True]))
    client = make_client(sandbox)
    subject_token = sandbox.session_token("alice")
    with pytest.raises(AuthzError) as caught:
        client.authorize_with_challenge(
            "transfer_funds",
            answers={"pin": "1234"},
            resource_id=ALICE_ACCOUNT,
            subject_token=subject_token,
        )
    assert (caught.value.type, caught.value.status) == (UNAVAILABLE, 503)
    assert "authorize:solution at " in str(caught.value)
    assert sandbox.fault_counts()["requests:authorize"] == 2
    assert_no_secret(caught.value, subject_token, "1234")


def test_authorize_slower_than_the_timeout_raises_within_the_timeout(faulted: Start) -> None:
    sandbox = faulted(latency_ms=2000)
    patient = make_client(sandbox, timeout=10)
    patient.access_token()  # 2 s: the token call waits out the delay
    hurried = make_client(sandbox, timeout=0.3, token_provider=patient.token_provider)
    subject_token = sandbox.session_token("alice")
    started = time.monotonic()
    with pytest.raises(TransportError) as caught:
        hurried.authorize(
            "show_account_balance_public", resource_id=ALICE_ACCOUNT, subject_token=subject_token
        )
    elapsed = time.monotonic() - started
    assert 0.25 <= elapsed < 2.0  # before the sandbox would have answered (2 s)
    assert "within 0.3 s" in str(caught.value)
    assert sandbox.base_url + AUTHORIZE_PATH in str(caught.value)
    assert sandbox.fault_counts()["requests:authorize"] == 1  # not retried


def test_a_key_discovery_fault_is_retried_with_backoff(faulted: Start) -> None:
    # token served, discovery answered 503 once, then served: a GET is safe to repeat.
    sandbox = faulted(error_rate=0.5, fault_seed=seed_for(0.5, [False, True, False]))
    sleeps = Sleeps()
    client = make_client(sandbox, sleep=sleeps)
    assert client.encryption_key().kid
    assert sleeps.seconds == [0.2]
    assert client.keys.fetches == 2
    assert sandbox.fault_counts()["requests:keys"] == 2


def test_key_discovery_faults_end_in_an_error_naming_the_endpoint(faulted: Start) -> None:
    # token served, then discovery answered 503 three times: bounded, then one clear error.
    sandbox = faulted(error_rate=0.5, fault_seed=seed_for(0.5, [False, True, True, True]))
    sleeps = Sleeps()
    client = make_client(sandbox, sleep=sleeps)
    with pytest.raises(AuthzError) as caught:
        client.encryption_key()
    assert (caught.value.type, caught.value.status) == (UNAVAILABLE, 503)
    message = str(caught.value)
    assert f"key discovery at {sandbox.base_url}/api/v1/discovery/keys" in message
    assert "gave up after 3 attempts" in message
    assert sleeps.seconds == [0.2, 0.4]
    assert sandbox.fault_counts()["requests:keys"] == 3  # bounded: no fourth call
    assert sandbox.fault_counts()["requests:token"] == 1  # the token is not fetched again
    assert client.encryption_key().kid  # nothing cached from the failure: the next call works


def test_a_mixed_fault_run_ends_each_call_in_an_answer_or_a_clear_503(faulted: Start) -> None:
    sandbox = faulted(error_rate=0.2, latency_ms="0-5", fault_seed=3)
    client = make_client(sandbox, timeout=2)
    subject_token = sandbox.session_token("alice")
    authorized = unavailable = 0
    for _ in range(40):
        try:
            outcome = client.authorize(
                "show_account_balance_public",
                resource_id=ALICE_ACCOUNT,
                subject_token=subject_token,
            )
        except AuthzError as exc:
            assert (exc.type, exc.status) == (UNAVAILABLE, 503), exc
            unavailable += 1
        else:
            assert isinstance(outcome, Authorized)
            authorized += 1
    counts = sandbox.fault_counts()
    assert authorized + unavailable == 40 and authorized > 0
    assert unavailable == counts.get("unavailable:authorize", 0)
    assert sandbox.stats()["authorize"].get("authorized") == authorized


# ---------------------------------------------------------------- scheduled rotation
def test_scheduled_rotation_is_survived_by_one_refetch(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(rotate_keys_every=60, clock=clock)
    client = make_client(sandbox, clock=clock)
    subject_token = sandbox.session_token("alice", ttl=3600)
    kids = [client.encryption_key().kid]
    for _ in range(3):
        clock.advance(61)  # the next request rotates; the client still holds the old key
        result = client.authorize_with_challenge(
            "transfer_funds",
            answers={"pin": "1234"},
            resource_id=ALICE_ACCOUNT,
            subject_token=subject_token,
        )
        assert isinstance(result, Authorized) and result.status == "authorized"
        kids.append(client.encryption_key().kid)
    assert len(set(kids)) == 4
    assert sandbox.fault_counts()["key_rotations"] == 3
    assert client.keys.fetches == 4
    assert sandbox.stats()["authorize"]["srn:error:unrecognized_key"] == 3
