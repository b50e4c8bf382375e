"""Load tests run ``locust`` as a subprocess against a sandbox PROCESS, a few seconds each.

Nothing here imports locust (its gevent monkey-patching would leak into the whole pytest
run); results are read from what Locust writes (see :mod:`support.loadtest`).

- ``sandbox_process``: a draft-dialect sandbox process (4 s tokens), one per pytest process
  (tests judge its counters by their change over the test, never their totals).
- ``published_process``: the same speaking the provider's published dialect (OIDC issuer,
  ``private_key_jwt`` with the demo client's key file, bare 401s), one per pytest process.
- ``dialect_service``: either of them, parametrized by dialect, with the locust options that point
  the users at its token endpoint explicitly (see :func:`support.loadtest.token_options`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.spec import AUTHORIZE_DIALECTS

from support.loadtest import TOKEN_TTL, Service, token_options


@pytest.fixture(scope="session")
def sandbox_process() -> Iterator[SandboxProcess]:
    """One sandbox process per pytest process (4 s tokens, 2048-bit keys)."""
    with SandboxProcess(token_ttl=TOKEN_TTL) as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def published_process() -> Iterator[SandboxProcess]:
    """One published-dialect sandbox process per pytest process (4 s tokens, the demo
    client's private key in ``client_key_file``)."""
    with SandboxProcess(token_ttl=TOKEN_TTL, dialect="published") as sandbox:
        assert sandbox.issuer and sandbox.client_key_file, sandbox.ready
        yield sandbox


@pytest.fixture(params=AUTHORIZE_DIALECTS)
def dialect_service(request: pytest.FixtureRequest) -> Service:
    """The draft or the published sandbox process, and how locust's users reach it."""
    fixture = "sandbox_process" if request.param == "draft" else "published_process"
    process: SandboxProcess = request.getfixturevalue(fixture)
    return Service(request.param, process, token_options(process))


@pytest.fixture
def sandbox_process_env(sandbox_process: SandboxProcess) -> dict[str, str]:
    """AUTHZKIT_* pointing at the sandbox process (as `authzkit loadtest` sets them)."""
    return sandbox_process.env()
