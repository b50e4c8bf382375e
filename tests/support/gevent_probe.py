"""Run in a subprocess by test_gevent.py: greenlets crossing token expiry under monkey-patching.

argv: base_url client_id client_secret subject_token resource_id order
``order`` is ``patch-first`` (Locust's order: patch, then import and build the client) or
``build-first`` (the client exists before gevent patches; its lock must not).
Prints one JSON line with the counters.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # nothing of authzkit is imported before the order below says so
    from authzkit.client.transport import Transport

base_url, client_id, client_secret, subject_token, resource_id, order = sys.argv[1:7]

if order == "build-first":
    from authzkit.client.facade import AuthzClient
    from authzkit.wire.clock import ManualClock

    clock = ManualClock(2_000_000_000)
    client = AuthzClient(
        base_url=base_url, client_id=client_id, client_secret=client_secret, clock=clock
    )

from gevent import monkey  # noqa: E402

monkey.patch_all()

import time  # noqa: E402

import gevent  # noqa: E402

if order == "patch-first":
    from authzkit.client.facade import AuthzClient
    from authzkit.wire.clock import ManualClock

    clock = ManualClock(2_000_000_000)
    client = AuthzClient(
        base_url=base_url, client_id=client_id, client_secret=client_secret, clock=clock
    )


class SlowTokenEndpoint:
    """Holds every token call for 50 ms (cooperatively), so all greenlets pile up behind it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def request(self, method: str, url: str, **kwargs: object) -> object:
        if kwargs.get("name") == "token":
            time.sleep(0.05)  # patched: yields to the other greenlets
        return self.inner.request(method, url, **kwargs)  # type: ignore[attr-defined]


# It forwards every keyword as it is: a Transport to the client, though declared loosely here.
client.transport = cast("Transport", SlowTokenEndpoint(client.transport))
GREENLETS = 100
results: list[str] = []


def one() -> None:
    outcome = client.authorize(
        "show_account_balance_public", resource_id=resource_id, subject_token=subject_token
    )
    results.append(outcome.status)


for _ in range(2):  # a cold cache, then across the refresh point
    gevent.joinall([gevent.spawn(one) for _ in range(GREENLETS)], timeout=60, raise_error=True)
    lifetime = client.token_provider.lifetime
    assert lifetime is not None, "no token was issued"
    clock.advance(lifetime)

provider = client.token_provider
print(
    json.dumps(
        {
            "authorized": results.count("authorized"),
            "token_calls": provider.token_calls,
            "refreshes": provider.refreshes,
            "lock_module": type(provider._lock).__module__,
            "patched": monkey.is_module_patched("threading"),
        }
    )
)
