"""Helpers of the fault tests: clients whose backoff sleeps are seen, seeds that give a
wanted run of 503s."""

from __future__ import annotations

from collections.abc import Callable

import requests

from authzkit.client.facade import AuthzClient
from authzkit.client.token import TokenProvider
from authzkit.client.transport import transport_for
from authzkit.sandbox import Sandbox
from authzkit.sandbox.injector import ErrorDice
from authzkit.wire.clock import Clock, ManualClock

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


def make_client(
    sandbox: Sandbox,
    *,
    timeout: float = 5.0,
    clock: Clock | None = None,
    sleep: Callable[[float], None] | None = None,
    token_provider: TokenProvider | None = None,
) -> AuthzClient:
    """A client of ``sandbox``; ``sleep`` replaces the token provider's backoff sleep."""
    session = requests.Session()
    if token_provider is None:
        token_provider = TokenProvider(
            auth_url=sandbox.auth_url,
            client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
            transport=transport_for(session, timeout=timeout),
            clock=clock,
            sleep=sleep,
        )
    return AuthzClient(
        base_url=sandbox.base_url,
        session=session,
        timeout=timeout,
        clock=clock,
        token_provider=token_provider,
    )
