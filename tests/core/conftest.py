"""Fixtures of the core client tests: a scripted fake service and clients wired to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.client import AuthzClient
from authzkit.clock import ManualClock
from .fakes import FakeService


@pytest.fixture
def fake() -> Iterator[FakeService]:
    service = FakeService().start()
    service.serve_defaults()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture
def fake_clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def fake_client(fake: FakeService, fake_clock: ManualClock) -> Iterator[AuthzClient]:
    with AuthzClient(base_url=fake.base_url, client_id="fake-client",
                     client_secret="fake-client-secret-value", clock=fake_clock,
                     timeout=5) as client:
        yield client
