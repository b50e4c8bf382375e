"""The published dialect's sandbox for these tests: one per session, reset before each test.

Its clock is a :class:`ManualClock` (it moves only when a test advances it), so token,
session and client assertion expiry are tested without sleeping; every test builds its times
from ``published.clock()``, so an earlier test's advance never matters.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.clock import ManualClock
from authzkit.sandbox import Sandbox

PUBLISHED_TOKEN_TTL = 60


@pytest.fixture(scope="session")
def published_session_sandbox() -> Iterator[Sandbox]:
    with Sandbox(dialect="published", key_size=2048, clock=ManualClock(),
                 token_ttl=PUBLISHED_TOKEN_TTL) as sandbox:
        yield sandbox


@pytest.fixture
def published(published_session_sandbox: Sandbox) -> Sandbox:
    """The published sandbox with challenges, used assertion ids and counters forgotten."""
    published_session_sandbox.reset()
    return published_session_sandbox


@pytest.fixture
def published_clock(published: Sandbox) -> ManualClock:
    assert isinstance(published.clock, ManualClock)
    return published.clock
