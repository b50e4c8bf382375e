"""Fixtures of the core client tests: a scripted fake service and clients wired to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from authzkit.client.facade import AuthzClient
from authzkit.wire.clock import ManualClock

from support.fake_service import FakeService
from support.subjects import Subject, subject_of


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
    with AuthzClient(
        base_url=fake.base_url,
        client_id="fake-client",
        client_secret="fake-client-secret-value",
        clock=fake_clock,
        timeout=5,
    ) as client:
        yield client


@pytest.fixture
def alice(sandbox: Any) -> Subject:
    return subject_of(sandbox, "alice")


@pytest.fixture
def client(sandbox: Any, clock: Any) -> Iterator[AuthzClient]:
    """A client of the shared sandbox, on the sandbox's clock."""
    with AuthzClient(
        base_url=sandbox.base_url,
        auth_url=sandbox.auth_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        clock=clock,
    ) as made:
        yield made
