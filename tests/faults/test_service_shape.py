"""A service of known shape (``service_time_us``, ``concurrency``) and the service time the
sandbox measured it gave: refused when bad, measured once per request, served in line."""

from __future__ import annotations

import threading

import pytest
import requests
from hdrh.histogram import HdrHistogram

from authzkit.sandbox import Sandbox, SandboxAdmin
from authzkit.sandbox.faults import Faults
from authzkit.testing.settings import parse_settings
from authzkit.wire.errors import ConfigError

AUTHORIZE = "/resources/v1/authorization/actions/authorize"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"service_time_us": 0}, "service_time_us must be a whole number of microseconds"),
        ({"service_time_us": 1.5}, "service_time_us must be"),
        ({"service_time_us": True}, "service_time_us must be"),
        ({"service_time_us": 60_000_001}, "service_time_us must be"),
        ({"concurrency": 0}, "concurrency must be a whole number of requests >= 1"),
        ({"concurrency": "2"}, "concurrency must be"),
    ],
)
def test_bad_shapes_are_config_errors_naming_the_setting(
    given: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Faults.of(**given)


def test_the_marker_takes_the_shape_as_the_command_does() -> None:
    settings = parse_settings({"service_time_us": 500, "concurrency": 2}, where="marker")
    assert (settings["service_time_us"], settings["concurrency"]) == (500, 2)
    with pytest.raises(
        ConfigError, match="marker: concurrency: must be a whole number of requests >= 1"
    ):
        parse_settings({"concurrency": 0}, where="marker")


def test_the_banner_names_the_shape() -> None:
    faults = Faults.of(service_time_us=1000, concurrency=4)
    assert faults.active
    assert faults.describe() == (
        "authorize service time 1,000 µs, at most 4 authorize requests in service at once"
    )


def test_each_request_is_measured_once_and_never_answered_before_its_service_time() -> None:
    with Sandbox(key_size=2048, service_time_us=2000) as sandbox:
        with requests.Session() as session:
            answers = [
                session.post(sandbox.base_url + AUTHORIZE, json={}, timeout=5) for _ in "12345"
            ]
        assert all(a.status_code in (400, 401) for a in answers)  # answered by the endpoint
        measured = SandboxAdmin(sandbox.base_url).service_time()
        histogram = HdrHistogram.decode(measured["histogram"].encode("ascii"))
        assert (measured["count"], histogram.get_total_count()) == (5, 5)
        assert measured["service_time_us"] == 2000 and measured["min"] >= 2000
        assert [s.service_time_us >= 2000 for s in sandbox.served()] == [True] * 5
        requests.get(sandbox.base_url + "/api/v1/discovery/keys", timeout=5)
        assert sandbox.service_time()["count"] == 5  # only authorize is shaped and measured
        sandbox.reset(faults=True)
        assert sandbox.service_time()["count"] == 0 and sandbox.served() == []


def test_without_faults_nothing_is_measured() -> None:
    with Sandbox(key_size=2048) as sandbox:
        requests.post(sandbox.base_url + AUTHORIZE, json={}, timeout=5)
        answer = SandboxAdmin(sandbox.base_url).service_time()
        assert (answer["measured"], answer["count"]) == (False, 0)


def test_with_concurrency_1_two_simultaneous_requests_are_served_one_after_the_other() -> None:
    with Sandbox(key_size=2048, service_time_us=300_000, concurrency=1) as sandbox:
        both = threading.Barrier(2)

        def ask() -> None:
            both.wait()
            requests.post(sandbox.base_url + AUTHORIZE, json={}, timeout=10)

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        first, second = sandbox.served()
        measured = sandbox.service_time()
    assert second.arrived_ns < first.answered_ns  # they were in the sandbox together …
    assert second.started_ns >= first.answered_ns  # … and the second was served after
    assert (measured["peak_in_service"], measured["waited"]) == (1, 1)
    assert second.waited_us > 0 and first.waited_us < second.waited_us
