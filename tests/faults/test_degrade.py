"""``--degrade-ms-per-min``: a service that slows as it runs. Every response of the three
SPEC endpoints is delayed by X ms for each minute since the sandbox started (on its clock),
so an endurance run's drift has a cause known by construction."""

from __future__ import annotations

import time

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.faults import Faults
from authzkit.testing.settings import parse_settings
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import ConfigError

KEYS = "/api/v1/discovery/keys"


@pytest.mark.parametrize("given", [-1, float("nan"), True, "6"])
def test_a_bad_degradation_is_a_config_error_naming_it(given: object) -> None:
    with pytest.raises(
        ConfigError, match="degrade_ms_per_min must be a number of milliseconds per minute >= 0"
    ):
        Faults.of(degrade_ms_per_min=given)


def test_the_delay_grows_with_the_minutes_since_start() -> None:
    faults = Faults.of(degrade_ms_per_min=6)
    assert faults.active
    assert [faults.degradation_ms(s) for s in (0, 30, 600, -5)] == [0.0, 3.0, 60.0, 0.0]
    assert faults.describe() == "every response 6 ms slower per minute"
    assert not Faults.of().active and Faults.of().degradation_ms(600) == 0.0


def test_the_marker_takes_it_as_the_command_does() -> None:
    assert parse_settings({"degrade_ms_per_min": 6}, where="marker")["degrade_ms_per_min"] == 6
    with pytest.raises(ConfigError, match="marker: degrade_ms_per_min"):
        parse_settings({"degrade_ms_per_min": -1}, where="marker")


def test_a_response_half_a_minute_in_waits_its_share_and_none_at_the_start() -> None:
    """600 ms per minute: nothing at the start, 300 ms half a minute later (on the
    sandbox's clock; the wait itself is real, and a sleep never ends early)."""
    clock = ManualClock()
    with Sandbox(key_size=2048, clock=clock, degrade_ms_per_min=600) as sandbox:
        with requests.Session() as session:
            assert session.get(sandbox.base_url + KEYS, timeout=5).status_code == 200
            assert "delayed:keys" not in sandbox.fault_counts()
            clock.advance(30)
            sent = time.monotonic()
            assert session.get(sandbox.base_url + KEYS, timeout=5).status_code == 200
            assert time.monotonic() - sent >= 0.3
        assert sandbox.fault_counts()["delayed:keys"] == 1
