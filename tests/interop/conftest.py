"""Fixtures of the interop tests: one certified provider per module, and its clients' keys."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.certified_provider import CertifiedProvider, Keys


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys.generate()


@pytest.fixture(scope="module")
def provider(keys: Keys) -> Iterator[CertifiedProvider]:
    running = CertifiedProvider(keys)
    try:
        yield running
    finally:
        running.stop()
