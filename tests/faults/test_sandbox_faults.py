"""The sandbox's fault injection as a client sees it over HTTP: what is faulted, and how."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from authzkit.cli import main
from authzkit.clock import ManualClock
from authzkit.errors import ERRORS, ConfigError
from authzkit.jwe import KeyPair
from authzkit.sandbox import Sandbox
from authzkit.sandbox.faults import ErrorDice, Faults, parse_latency

from .conftest import UNAVAILABLE

TOKENS = "/api/v3.1/oauth/tokens"
KEYS = "/api/v1/discovery/keys"
AUTHORIZE = "/resources/v1/authorization/actions/authorize"
Start = Callable[..., Sandbox]


def enc_kid(sandbox: Sandbox) -> str:
    response = requests.get(sandbox.base_url + KEYS, timeout=5)
    assert response.status_code == 200, response.text
    return next(k["kid"] for k in response.json()["keys"] if k["use"] == "enc")


# ---------------------------------------------------------------- settings
@pytest.mark.parametrize(("given", "expected"), [
    (None, (0.0, 0.0)), (5, (5.0, 5.0)), ("5", (5.0, 5.0)), ("50-200", (50.0, 200.0)),
    ((50, 200), (50.0, 200.0)), (" 0-1 ", (0.0, 1.0))])
def test_latency_is_milliseconds_or_a_range(given: object, expected: tuple[float, float]) -> None:
    assert parse_latency(given) == expected


@pytest.mark.parametrize("options", [
    {"latency_ms": "200-50"}, {"latency_ms": "fast"}, {"latency_ms": -1},
    {"error_rate": 1.5}, {"error_rate": -0.1}, {"error_rate": "0.2"},
    {"token_outage": -1}, {"rotate_keys_every": 0}, {"fault_seed": "seven"}])
def test_bad_fault_settings_are_config_errors_naming_the_setting(options: dict[str, object]
                                                                  ) -> None:
    name = next(iter(options)).removeprefix("fault_")
    with pytest.raises(ConfigError, match=name.split("_")[0]):
        Sandbox(key_size=2048, **options)  # type: ignore[arg-type]


def test_the_default_injects_nothing_and_describe_says_what_is_on() -> None:
    assert not Faults().active and Faults().describe() == "none"
    faults = Faults.of(latency_ms="50-200", error_rate=0.2, seed=7, token_outage=30,
                       rotate_keys_every=60)
    assert faults.active
    assert faults.describe() == ("latency 50-200 ms, 503 rate 0.2 (seed 7), token outage for "
                                 "the first 30 s, key rotation every 60 s")


def test_the_command_refuses_a_bad_rate_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--port", "0", "--error-rate", "1.5"]) == 2
    assert "error_rate must be a fraction from 0 to 1" in capsys.readouterr().err


def test_the_503_row_is_in_the_error_table() -> None:
    kind = ERRORS[UNAVAILABLE]
    assert (kind.status, kind.in_spec) == (503, False)


# ---------------------------------------------------------------- error rate
def test_the_error_rate_is_seeded_and_only_503s_are_injected(faulted: Start) -> None:
    sandbox = faulted(error_rate=0.3, fault_seed=11)
    dice = ErrorDice(0.3, 11)
    expected = [503 if dice.roll() else 200 for _ in range(60)]
    seen = []
    with requests.Session() as http:
        for _ in expected:
            response = http.get(sandbox.base_url + KEYS, timeout=5)
            seen.append(response.status_code)
            if response.status_code == 503:
                assert response.headers["content-type"] == "application/json"
                body = response.json()
                assert (body["type"], body["status"]) == (UNAVAILABLE, 503)
                assert "error rate" in body["detail"]
    assert seen == expected  # the same seed replays the same sequence
    assert 5 <= seen.count(503) <= 35
    counts = sandbox.fault_counts()
    assert counts["requests:keys"] == 60 and counts["unavailable:keys"] == seen.count(503)


def test_every_spec_endpoint_is_faulted_and_no_sandbox_endpoint_is(faulted: Start) -> None:
    sandbox = faulted(error_rate=1.0)
    base = sandbox.base_url
    with requests.Session() as http:
        token = http.post(base + TOKENS, json={"clientId": sandbox.client_id,
                                               "clientSecret": sandbox.client_secret})
        keys = http.get(base + KEYS)
        authorize = http.post(base + AUTHORIZE, json={})
        for response in (token, keys, authorize):
            assert (response.status_code, response.json()["type"]) == (503, UNAVAILABLE)
        assert http.get(base + "/sandbox/v1/world").status_code == 200
        assert http.post(base + "/sandbox/v1/sessions", json={"subject": "alice"}).ok
        assert http.post(base + "/sandbox/v1/rotate-keys").ok
        assert http.get(base + "/sandbox/v1/stats").ok
        assert http.get(base + "/openapi.json").ok
        assert http.get(base + "/no/such/path").status_code == 404


# ---------------------------------------------------------------- latency
def test_latency_delays_every_spec_response(faulted: Start) -> None:
    sandbox = faulted(latency_ms="60-80", fault_seed=1)
    with requests.Session() as http:
        for _ in range(3):
            started = time.perf_counter()
            assert http.get(sandbox.base_url + KEYS, timeout=5).ok
            assert time.perf_counter() - started >= 0.06


def test_latency_does_not_block_the_event_loop(faulted: Start) -> None:
    """While one SPEC request waits out its delay, a sandbox endpoint answers at once."""
    # 4 s: the sandbox endpoint has seconds to answer before the delayed request does
    sandbox = faulted(latency_ms=4000)
    slow = threading.Thread(target=requests.get, args=(sandbox.base_url + KEYS,),
                            kwargs={"timeout": 10})
    slow.start()
    deadline = time.monotonic() + 5
    while sandbox.fault_counts().get("requests:keys", 0) < 1:
        assert time.monotonic() < deadline, "the delayed request never arrived"
        time.sleep(0.01)
    assert requests.get(sandbox.base_url + "/sandbox/v1/world", timeout=5).ok
    assert slow.is_alive(), "the sandbox endpoint waited for the delayed request"
    slow.join(10)


# ---------------------------------------------------------------- token outage
def test_the_token_outage_lasts_its_seconds_on_the_sandbox_clock(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(token_outage=30, clock=clock)
    credentials = {"clientId": sandbox.client_id, "clientSecret": sandbox.client_secret}
    with requests.Session() as http:
        refused = http.post(sandbox.base_url + TOKENS, json=credentials)
        assert (refused.status_code, refused.json()["type"]) == (503, UNAVAILABLE)
        assert refused.headers["retry-after"] == "30"
        assert http.get(sandbox.base_url + KEYS).ok  # only the token endpoint is out
        clock.advance(29.5)
        assert http.post(sandbox.base_url + TOKENS, json=credentials).status_code == 503
        clock.advance(0.5)
        assert http.post(sandbox.base_url + TOKENS, json=credentials).ok
    assert sandbox.fault_counts()["token_outage"] == 2


# ---------------------------------------------------------------- scheduled rotation
def test_keys_rotate_on_schedule_once_per_due_time(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(rotate_keys_every=10, clock=clock)
    first = enc_kid(sandbox)
    clock.advance(9)
    assert enc_kid(sandbox) == first
    clock.advance(1)
    with ThreadPoolExecutor(8) as pool:  # many requests at the due time: one rotation
        kids = set(pool.map(lambda _: enc_kid(sandbox), range(8)))
    assert len(kids) == 1 and first not in kids
    clock.advance(100)  # a quiet spell of ten periods: one rotation, not ten
    third = enc_kid(sandbox)
    assert third not in kids | {first}
    assert sandbox.fault_counts()["key_rotations"] == 2
    clock.advance(5)
    assert enc_kid(sandbox) == third  # back on the start + k * 10 s grid: next at 120 s


def test_a_failed_scheduled_rotation_is_logged_and_the_request_still_served(
        faulted: Start, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    sandbox = faulted(rotate_keys_every=10, clock=clock)
    first = enc_kid(sandbox)

    def broken(*args: object, **kwargs: object) -> KeyPair:
        raise OSError("no entropy today")

    monkeypatch.setattr(KeyPair, "generate", broken)  # what rotation calls to make a key
    clock.advance(10)
    assert enc_kid(sandbox) == first
    assert "scheduled key rotation failed (OSError)" in caplog.text
    assert "key_rotations" not in sandbox.fault_counts()


# ---------------------------------------------------------------- published dialect
OIDC_TOKEN = "/auth/realms/authzkit/protocol/openid-connect/token"
OIDC_CONFIGURATION = "/auth/realms/authzkit/.well-known/openid-configuration"


def test_the_published_dialects_endpoints_are_faulted_and_carry_a_request_id(
        faulted: Start) -> None:
    sandbox = faulted(error_rate=1.0, dialect="published")
    base = sandbox.base_url
    with requests.Session() as http:
        token = http.post(base + OIDC_TOKEN, data={
            "grant_type": "client_credentials", "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret})
        for response in (token, http.get(base + KEYS), http.post(base + AUTHORIZE, json={})):
            assert (response.status_code, response.json()["type"]) == (503, UNAVAILABLE)
            assert response.headers["x-request-id"]
        assert http.get(base + OIDC_CONFIGURATION).ok  # the issuer's document is not faulted
        assert http.post(base + TOKENS, json={}).status_code == 404  # not an endpoint here
        assert http.get(base + "/sandbox/v1/stats").ok
    counts = sandbox.fault_counts()
    assert counts["unavailable:token"] == counts["requests:token"] == 1


def test_the_token_outage_covers_the_published_token_endpoint(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(token_outage=10, clock=clock, dialect="published")
    form = {"grant_type": "client_credentials", "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret}
    with requests.Session() as http:
        refused = http.post(sandbox.base_url + OIDC_TOKEN, data=form)
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "10")
        clock.advance(10)
        assert http.post(sandbox.base_url + OIDC_TOKEN, data=form).json()["token_type"] == (
            "bearer")
    assert sandbox.fault_counts()["token_outage"] == 1
    assert sandbox.stats()["tokens_issued"] == 1
