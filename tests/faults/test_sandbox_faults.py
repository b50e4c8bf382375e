"""The sandbox's fault injection as a client sees it over HTTP: what is faulted, and how."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from authzkit.cli import main
from authzkit.sandbox import Sandbox
from authzkit.sandbox.counts import FaultCounts
from authzkit.sandbox.faults import Faults, parse_latency
from authzkit.sandbox.injector import ErrorDice, FaultInjector
from authzkit.sandbox.pause import PAUSE_POLL_SECONDS, HeldResponse, PauseGate
from authzkit.wire.clock import ManualClock
from authzkit.wire.error_table import ERRORS
from authzkit.wire.errors import ConfigError
from authzkit.wire.jwe import KeyPair

from support.faults import UNAVAILABLE

TOKENS = "/api/v3.1/oauth/tokens"
KEYS = "/api/v1/discovery/keys"
AUTHORIZE = "/resources/v1/authorization/actions/authorize"
Start = Callable[..., Sandbox]


def enc_kid(sandbox: Sandbox) -> str:
    response = requests.get(sandbox.base_url + KEYS, timeout=5)
    assert response.status_code == 200, response.text
    return next(k["kid"] for k in response.json()["keys"] if k["use"] == "enc")


# ---------------------------------------------------------------- settings
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, (0.0, 0.0)),
        (5, (5.0, 5.0)),
        ("5", (5.0, 5.0)),
        ("50-200", (50.0, 200.0)),
        ((50, 200), (50.0, 200.0)),
        (" 0-1 ", (0.0, 1.0)),
    ],
)
def test_latency_is_milliseconds_or_a_range(given: object, expected: tuple[float, float]) -> None:
    assert parse_latency(given) == expected


@pytest.mark.parametrize(
    "options",
    [
        {"latency_ms": "200-50"},
        {"latency_ms": "fast"},
        {"latency_ms": -1},
        {"error_rate": 1.5},
        {"error_rate": -0.1},
        {"error_rate": "0.2"},
        {"token_outage": -1},
        {"rotate_keys_every": 0},
        {"fault_seed": "seven"},
    ],
)
def test_bad_fault_settings_are_config_errors_naming_the_setting(
    options: dict[str, object],
) -> None:
    name = next(iter(options)).removeprefix("fault_")
    with pytest.raises(ConfigError, match=name.split("_")[0]):
        Sandbox(key_size=2048, **options)  # type: ignore[arg-type]


def test_the_default_injects_nothing_and_describe_says_what_is_on() -> None:
    assert not Faults().active and Faults().describe() == "none"
    faults = Faults.of(
        latency_ms="50-200", error_rate=0.2, fault_seed=7, token_outage=30, rotate_keys_every=60
    )
    assert faults.active
    assert faults.describe() == (
        "latency 50-200 ms, 503 rate 0.2 (seed 7), token outage for "
        "the first 30 s, key rotation every 60 s"
    )


def test_the_command_refuses_a_bad_rate_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["sandbox", "--port", "0", "--error-rate", "1.5"])
    assert refused.value.code == 2
    assert "--error-rate: must be a ratio >= 0 and <= 1, got 1.5" in capsys.readouterr().err


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
        token = http.post(
            base + TOKENS,
            json={"clientId": sandbox.client_id, "clientSecret": sandbox.client_secret},
        )
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
    slow = threading.Thread(
        target=requests.get, args=(sandbox.base_url + KEYS,), kwargs={"timeout": 10}
    )
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
    faulted: Start, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    sandbox = faulted(rotate_keys_every=10, clock=clock)
    first = enc_kid(sandbox)

    def broken(*args: object, **kwargs: object) -> KeyPair:
        raise OSError("no entropy today")

    monkeypatch.setattr(KeyPair, "generate", broken)  # what rotation calls to make a key
    clock.advance(10)  # the spare made at start becomes the key; the next spare fails
    second = enc_kid(sandbox)
    assert second != first
    assert "rotation failed" not in caplog.text
    clock.advance(10)  # no spare, and no key made now either: the old key stays
    assert enc_kid(sandbox) == second
    assert "scheduled key rotation failed (OSError)" in caplog.text
    assert sandbox.fault_counts()["key_rotations"] == 1


# ---------------------------------------------------------------- published dialect
OIDC_TOKEN = "/auth/realms/authzkit/protocol/openid-connect/token"
OIDC_CONFIGURATION = "/auth/realms/authzkit/.well-known/openid-configuration"


def test_the_published_dialects_endpoints_are_faulted_and_carry_a_request_id(
    faulted: Start,
) -> None:
    sandbox = faulted(error_rate=1.0, dialect="published")
    base = sandbox.base_url
    with requests.Session() as http:
        token = http.post(
            base + OIDC_TOKEN,
            data={
                "grant_type": "client_credentials",
                "client_id": sandbox.client_id,
                "client_secret": sandbox.client_secret,
            },
        )
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
    form = {
        "grant_type": "client_credentials",
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
    }
    with requests.Session() as http:
        refused = http.post(sandbox.base_url + OIDC_TOKEN, data=form)
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "10")
        clock.advance(10)
        assert http.post(sandbox.base_url + OIDC_TOKEN, data=form).json()["token_type"] == (
            "bearer"
        )
    assert sandbox.fault_counts()["token_outage"] == 1
    assert sandbox.stats()["tokens_issued"] == 1


# ---------------------------------------------------------------- stop-the-world pause
def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` (an event the sandbox reports, not a duration) with a deadline."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def held(sandbox: Sandbox, endpoint: str) -> int:
    return sandbox.fault_counts().get(f"held:{endpoint}", 0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pause_every": 5}, "pause_ms is required with pause_every"),
        ({"pause_ms": 500}, "pause_every is required with pause_ms"),
        ({"pause_every": 0, "pause_ms": 500}, "pause_every must be a positive number of seconds"),
        ({"pause_every": -5, "pause_ms": 500}, "pause_every must be"),
        ({"pause_every": "5", "pause_ms": 500}, "pause_every must be"),
        ({"pause_every": float("inf"), "pause_ms": 500}, "pause_every must be"),
        ({"pause_every": 5, "pause_ms": 0}, "pause_ms must be a positive number of milliseconds"),
        ({"pause_every": 5, "pause_ms": -1}, "pause_ms must be"),
        ({"pause_every": 5, "pause_ms": True}, "pause_ms must be"),
        ({"pause_every": 5, "pause_ms": float("nan")}, "pause_ms must be"),
        ({"pause_every": 5, "pause_ms": 5000}, "pause_ms must be shorter than the period"),
    ],
)
def test_bad_pause_settings_are_config_errors_naming_the_option(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Sandbox(key_size=2048, **options)  # type: ignore[arg-type]


def test_the_pause_is_described_and_counts_as_a_fault() -> None:
    faults = Faults.of(pause_every=5, pause_ms=500)
    assert faults.active and (faults.pause_every, faults.pause_ms) == (5.0, 500.0)
    assert faults.describe() == "pause 500 ms every 5 s"
    assert Faults.of(latency_ms=5, pause_every=600, pause_ms=599_000).describe() == (
        "latency 5 ms, pause 599000 ms every 600 s"
    )


def test_the_pause_schedule_is_the_first_p_ms_of_every_period_since_start() -> None:
    gate = PauseGate(10, 500, clock=ManualClock(), started_at=100.0, counts=FaultCounts())
    assert gate.pause_at(100.0) == (0, 100.5)  # the first period starts paused
    assert gate.pause_at(100.4999) == (0, 100.5)
    assert gate.pause_at(100.5) is None
    assert gate.pause_at(109.999) is None
    assert gate.pause_at(110.0) == (1, 110.5)
    assert gate.pause_at(1100.25) == (100, 1100.5)
    assert gate.pause_at(99.9) is None  # before start (a clock set back): nothing held


AUTHORIZE_SCOPE = {"type": "http", "path": AUTHORIZE, "method": "POST", "headers": []}


async def _ready(condition: Callable[[], bool]) -> None:
    """Let the event loop run until ``condition`` holds (a bounded number of turns)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def _injector(app: Callable[..., Any], clock: ManualClock) -> FaultInjector:
    return FaultInjector(
        app, Faults.of(pause_every=10, pause_ms=500), clock=clock, rotate_keys=lambda: "unused"
    )


def test_a_response_in_flight_when_a_pause_begins_waits_for_its_end() -> None:
    clock = ManualClock()
    start = clock()
    sent: list[tuple[str, float]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append((message["type"], clock()))

    async def scenario() -> FaultInjector:
        proceed = asyncio.Event()

        async def slow_endpoint(scope: object, receive: object, send: Any) -> None:
            await proceed.wait()  # the request is being worked on when the pause begins
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

        injector = _injector(slow_endpoint, clock)
        clock.advance(9.9)  # after the first pause: the request arrives unpaused
        # The endpoints here never read a body: no receive channel (None).
        request = asyncio.create_task(injector(AUTHORIZE_SCOPE, None, send))  # type: ignore[arg-type]
        await _ready(lambda: "requests:authorize" in injector.counts.snapshot())
        clock.advance(0.1)  # the second pause begins at start + 10 s
        proceed.set()
        await _ready(lambda: "held:authorize" in injector.counts.snapshot())
        assert sent == []  # the response is ready and held
        clock.advance(0.25)
        await asyncio.sleep(PAUSE_POLL_SECONDS * 3)
        assert sent == []  # still inside the pause
        clock.advance(0.25)
        await asyncio.wait_for(request, 10)
        return injector

    injector = asyncio.run(scenario())
    end = start + 10.5
    assert sent == [("http.response.start", end), ("http.response.body", end)]
    assert injector.pause is not None
    assert injector.pause.held_responses() == [HeldResponse("authorize", start + 10.0, end, end)]
    assert injector.counts.snapshot() == {"requests:authorize": 1, "pauses": 1, "held:authorize": 1}


def test_a_response_outside_the_pause_goes_out_at_once() -> None:
    clock = ManualClock()
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    async def endpoint(scope: object, receive: object, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def scenario() -> FaultInjector:
        injector = _injector(endpoint, clock)
        for offset in (0.5, 5.0, 9.0):  # from the pause's end to the next period's start
            clock.advance(offset - (clock() - injector.started_at))
            # the clock never moves while we wait: a held response would time out
            await asyncio.wait_for(injector(AUTHORIZE_SCOPE, None, send), 5)  # type: ignore[arg-type]
        return injector

    injector = asyncio.run(scenario())
    assert sent == ["http.response.start", "http.response.body"] * 3
    assert injector.counts.snapshot() == {"requests:authorize": 3}
    assert injector.pause is not None and injector.pause.held_responses() == []


def test_held_spec_responses_go_out_when_the_pause_ends(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(pause_every=10, pause_ms=500, clock=clock)
    start, base = clock(), sandbox.base_url
    credentials = {"clientId": sandbox.client_id, "clientSecret": sandbox.client_secret}
    with ThreadPoolExecutor(3) as pool:
        keys = pool.submit(requests.get, base + KEYS, timeout=30)  # the first pause is on
        wait_until(lambda: held(sandbox, "keys") == 1, "the keys response held")
        assert not keys.done()
        clock.advance(0.5)
        assert keys.result(timeout=10).status_code == 200
        # Between pauses nothing is held.
        with requests.Session() as http:
            assert http.post(base + TOKENS, json=credentials, timeout=5).ok
            assert http.post(base + AUTHORIZE, json={}, timeout=5).status_code == 401
            clock.advance(9.4)
            assert http.get(base + KEYS, timeout=5).ok
        clock.advance(0.1)  # start + 10 s: the second pause, all three endpoints held
        token = pool.submit(requests.post, base + TOKENS, json=credentials, timeout=30)
        authorize = pool.submit(requests.post, base + AUTHORIZE, json={}, timeout=30)
        keys = pool.submit(requests.get, base + KEYS, timeout=30)
        wait_until(
            lambda: (
                held(sandbox, "token") + held(sandbox, "authorize") + held(sandbox, "keys") == 4
            ),
            "three more responses held",
        )
        assert not (token.done() or authorize.done() or keys.done())
        clock.advance(0.5)
        assert token.result(timeout=10).json()["tokenType"] == "Bearer"
        assert authorize.result(timeout=10).status_code == 401
        assert keys.result(timeout=10).status_code == 200
    counts = sandbox.fault_counts()
    assert (
        counts["pauses"],
        counts["held:keys"],
        counts["held:token"],
        counts["held:authorize"],
    ) == (2, 2, 1, 1)
    assert counts["requests:keys"] == 3 and counts["requests:token"] == 2
    records = sandbox.held_responses()
    assert [record.pause_end for record in records] == [start + 0.5] + [start + 10.5] * 3
    assert all(r.held_at < r.pause_end <= r.released_at for r in records)


def test_the_sandbox_endpoints_are_never_paused(faulted: Start) -> None:
    clock = ManualClock()  # never moved: the first pause lasts for the whole test
    sandbox = faulted(pause_every=10, pause_ms=9_999, clock=clock)
    base = sandbox.base_url
    with requests.Session() as http:  # a paused answer would time out
        assert http.get(base + "/sandbox/v1/world", timeout=5).ok
        assert http.post(base + "/sandbox/v1/sessions", json={"subject": "alice"}, timeout=5).ok
        assert http.post(base + "/sandbox/v1/rotate-keys", timeout=5).ok
        assert http.get(base + "/sandbox/v1/stats", timeout=5).ok
        assert http.get(base + "/openapi.json", timeout=5).ok
        assert http.get(base + "/no/such/path", timeout=5).status_code == 404
    assert sandbox.fault_counts() == {} and sandbox.held_responses() == []


def test_the_pause_holds_the_published_token_endpoint_and_its_503s(faulted: Start) -> None:
    clock = ManualClock()
    sandbox = faulted(
        pause_every=10, pause_ms=500, clock=clock, dialect="published", error_rate=1.0
    )
    form = {
        "grant_type": "client_credentials",
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
    }
    with ThreadPoolExecutor(1) as pool:
        token = pool.submit(requests.post, sandbox.base_url + OIDC_TOKEN, data=form, timeout=30)
        wait_until(lambda: held(sandbox, "token") == 1, "the token response held")
        # the issuer's document is not a SPEC endpoint: answered during the pause
        assert requests.get(sandbox.base_url + OIDC_CONFIGURATION, timeout=5).ok
        assert not token.done()
        clock.advance(0.5)
        response = token.result(timeout=10)
    assert (response.status_code, response.json()["type"]) == (503, UNAVAILABLE)
    assert response.headers["x-request-id"]
    [record] = sandbox.held_responses()
    assert record.endpoint == "token" and record.released_at >= record.pause_end


def test_stopping_the_sandbox_releases_held_responses() -> None:
    clock = ManualClock()  # never moved: only the stop can end this pause
    sandbox = Sandbox(key_size=2048, pause_every=600, pause_ms=599_000, clock=clock).start()
    try:
        with ThreadPoolExecutor(1) as pool:
            keys = pool.submit(requests.get, sandbox.base_url + KEYS, timeout=30)
            wait_until(lambda: held(sandbox, "keys") == 1, "the keys response held")
            sandbox.stop()
            assert keys.result(timeout=30).status_code == 200  # answered, not cut off
    finally:
        sandbox.stop()
