"""Fixtures of the notebook tests: one embedded sandbox for the module, reset between tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit import connect
from authzkit.shared.connection import Connection
from authzkit.wire.config import Settings


@pytest.fixture(scope="module")
def embedded_environment() -> Iterator[Connection]:
    with connect(Settings(), key_size=2048) as env:
        yield env


@pytest.fixture
def env(embedded_environment: Connection) -> Connection:
    assert embedded_environment.sandbox is not None
    embedded_environment.sandbox.reset()
    return embedded_environment
