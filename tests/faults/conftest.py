"""Fixtures of the fault tests: sandboxes with faults, clients whose backoff sleeps are seen.

Each test starts its own small sandbox (2048-bit keys, a fraction of a second) because the
faults are fixed at start; the session sandbox of ``tests/conftest.py`` stays fault-free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from authzkit.client import AuthzClient
from authzkit.clock import Clock, ManualClock
from authzkit.sandbox import Sandbox
from authzkit.sandbox.faults import ErrorDice
from authzkit.token import TokenProvider
from authzkit.transport import transport_for

UNAVAILABLE = "srn:error:service_unavailable"
ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"


class Sleeps:
    """A ``sleep`` for the token provider: records each backoff, moves ``clock`` by it."""

    def __init__(self, clock: ManualClock | None = None) -> None:
        self.clock = clock
        self.seconds: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        if self.clock is not None:
            self.clock.advance(seconds)


def seed_for(rate: float, wanted: list[bool]) -> int:
    """A fault seed whose first 503 decisions are ``wanted`` (True = answered 503)."""
    for seed in range(10_000):
        dice = ErrorDice(rate, seed)
        if [dice.roll() for _ in wanted] == wanted:
            return seed
    raise AssertionError(f"no seed gives {wanted}")


@pytest.fixture
def faulted() -> Iterator[Callable[..., Sandbox]]:
    """``faulted(error_rate=…, …)`` starts a sandbox with those faults; all stop at teardown."""
    started: list[Sandbox] = []

    def start(**faults: Any) -> Sandbox:
        sandbox = Sandbox(key_size=2048, **faults).start()
        started.append(sandbox)
        return sandbox

    yield start
    for sandbox in started:
        sandbox.stop()


def make_client(sandbox: Sandbox, *, timeout: float = 5.0, clock: Clock | None = None,
                sleep: Callable[[float], None] | None = None,
                token_provider: TokenProvider | None = None) -> AuthzClient:
    """A client of ``sandbox``; ``sleep`` replaces the token provider's backoff sleep."""
    session = requests.Session()
    if token_provider is None:
        token_provider = TokenProvider(
            auth_url=sandbox.auth_url, client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
            transport=transport_for(session, timeout=timeout), clock=clock, sleep=sleep)
    return AuthzClient(base_url=sandbox.base_url, session=session, timeout=timeout,
                       clock=clock, token_provider=token_provider)
