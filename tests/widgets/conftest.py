"""Fixtures of the notebook tests: one embedded sandbox for the module, reset between tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit import connect
from authzkit.shared.connection import Connection
from authzkit.wire.config import Settings


@pytest.fixture(scope="module")
def embedded_connection() -> Iterator[Connection]:
    with connect(Settings(), key_size=2048) as connection:
        yield connection


@pytest.fixture
def connection(embedded_connection: Connection) -> Connection:
    assert embedded_connection.sandbox is not None
    embedded_connection.sandbox.reset()
    return embedded_connection
