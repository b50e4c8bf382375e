"""Fixtures of the notebook tests: one embedded sandbox for the module, reset between tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit import connect
from authzkit.config import Settings
from authzkit.connection import Environment


@pytest.fixture(scope="module")
def sandbox_env() -> Iterator[Environment]:
    with connect(Settings(), key_size=2048) as env:
        yield env


@pytest.fixture
def env(sandbox_env: Environment) -> Environment:
    assert sandbox_env.sandbox is not None
    sandbox_env.sandbox.reset()
    return sandbox_env
