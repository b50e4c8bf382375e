"""Fixtures of the interop tests: one certified provider per module, its clients' keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jwcrypto import jwk

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


@pytest.fixture(scope="module")
def key_files(keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The named key as PEM (no kid) and as a JWK file (with its kid); the unnamed as PEM."""
    folder = tmp_path_factory.mktemp("interop-keys")
    files = {"named.pem": keys.named.private_pem(), "unnamed.pem": keys.unnamed.private_pem()}
    private = json.loads(jwk.JWK.from_pem(keys.named.private_pem().encode()).export_private())
    files["named.jwk"] = json.dumps({**private, "kid": Keys.KID})
    files["other-kid.jwk"] = json.dumps({**private, "kid": "another-kid"})
    for name, text in files.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)
    return {name: folder / name for name in files}
