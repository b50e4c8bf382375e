"""Fixtures of the AuthZEN tests: one Cerbos (the independent PDP) per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.cerbos import CerbosPdp


@pytest.fixture(scope="session")
def cerbos() -> Iterator[CerbosPdp]:
    running = CerbosPdp()
    try:
        yield running
    finally:
        running.stop()
