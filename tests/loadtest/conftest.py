"""Load tests run ``locust`` as a subprocess against a sandbox PROCESS, a few seconds each.

Nothing here imports locust (its gevent monkey-patching would leak into the whole pytest
run); results are read from what Locust writes (see ``support.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.sandbox.process import SandboxProcess

from .support import TOKEN_TTL


@pytest.fixture(scope="module")
def sandbox_process() -> Iterator[SandboxProcess]:
    """One sandbox process per test module (4 s tokens, 2048-bit keys)."""
    with SandboxProcess(token_ttl=TOKEN_TTL) as sandbox:
        yield sandbox


@pytest.fixture
def sandbox_env(sandbox_process: SandboxProcess) -> dict[str, str]:
    """AUTHZKIT_* pointing at the sandbox process (as `authzkit loadtest` sets them)."""
    return sandbox_process.env()
