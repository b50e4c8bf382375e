"""Token calls across 10 full token lifetimes at a production lifetime, counted by the sandbox.

The Locust benchmark (``locust_overhead.py``) measures short sandbox tokens in real time,
where the proportional refresh margin (a quarter of a short lifetime) makes each token serve
only three quarters of its ``expiresIn``. This script measures the regime a real environment
runs in: 900 s tokens (margin capped at 60 s), 10 lifetimes = 9,000 s of service time, on
ONE manual clock shared by the sandbox and the client, so the hours pass in a second. 500
users (50 threads of 10 users each) ask the shared token provider for the token on every
simulated second-and-a-half; the sandbox counts the tokens it issues. Prints the count
against the target (<= 11: one per lifetime plus the first) and a per-user-login baseline.
"""

from __future__ import annotations

import threading

from authzkit.client.facade import AuthzClient
from authzkit.sandbox import Sandbox
from authzkit.wire.clock import ManualClock

USERS = 500
THREADS = 50
LIFETIME_S = 900
LIFETIMES = 10
TICK_S = 1.5
TARGET = 11


def main() -> None:
    clock = ManualClock()
    with Sandbox(key_size=2048, token_ttl=LIFETIME_S, clock=clock) as sandbox:
        client = AuthzClient(base_url=sandbox.base_url, client_id=sandbox.client_id,
                             client_secret=sandbox.client_secret, clock=clock)
        provider = client.token_provider
        ticks = int(LIFETIME_S * LIFETIMES / TICK_S)
        tick_done = threading.Barrier(THREADS + 1)
        tick_start = threading.Barrier(THREADS + 1)

        def users() -> None:
            for _ in range(ticks):
                tick_start.wait()
                for _ in range(USERS // THREADS):
                    provider.token()
                tick_done.wait()

        workers = [threading.Thread(target=users, daemon=True) for _ in range(THREADS)]
        for worker in workers:
            worker.start()
        for _ in range(ticks):
            tick_start.wait()
            tick_done.wait()
            clock.advance(TICK_S)
        for worker in workers:
            worker.join()
        issued = sandbox.stats()["tokens_issued"]
    print(f"token calls: {issued} for {USERS} users across {LIFETIMES} token lifetimes of "
          f"{LIFETIME_S} s (target <= {TARGET}; a per-user login would make "
          f"{USERS * LIFETIMES:,}; manual clock shared by sandbox and client, "
          f"{ticks * USERS:,} token() calls)")


if __name__ == "__main__":
    main()
