"""The fault injector: an ASGI wrapper applying :class:`~authzkit.sandbox.faults.Faults` to the
service's token, keys and authorize endpoints only (never ``/sandbox/v1/*``), one seeded draw
per request in order of arrival; authorize requests also pass the service gate and the pause
(docs/internals.md, "Faults").
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
from collections.abc import Callable
from typing import Any

from authzkit.sandbox.counts import FaultCounts
from authzkit.sandbox.faults import Faults
from authzkit.sandbox.pause import PauseGate
from authzkit.sandbox.service_time import ServiceGate
from authzkit.wire import authzen
from authzkit.wire.clock import Clock
from authzkit.wire.error_table import error_body
from authzkit.wire.spec import (
    AUTHORIZE_PATH,
    AUTHZEN,
    DISCOVERY_PATH,
    OIDC_TOKEN_PATH,
    SANDBOX_REALM_PATH,
    TOKEN_PATH,
)

UNAVAILABLE = "srn:error:service_unavailable"
log = logging.getLogger(__name__)
TOKEN_ENDPOINT = "token"
SERVED_ENDPOINT = "authorize"  # the endpoint whose service is shaped and measured
# Every endpoint shaped and measured so: authorize, and AuthZEN's decision endpoints.
SERVED_ENDPOINTS = frozenset((SERVED_ENDPOINT, "evaluation", "evaluations"))
# The faulted endpoints of each dialect by path, named like the client's load-test rows: the
# published dialect's OIDC token endpoint is its "token" endpoint (503s, token outages).
FAULTED_ENDPOINTS: dict[str, dict[str, str]] = {
    "draft": {TOKEN_PATH: TOKEN_ENDPOINT, DISCOVERY_PATH: "keys", AUTHORIZE_PATH: "authorize"},
    "published": {
        SANDBOX_REALM_PATH + OIDC_TOKEN_PATH: TOKEN_ENDPOINT,
        DISCOVERY_PATH: "keys",
        AUTHORIZE_PATH: "authorize",
    },
    AUTHZEN: {
        authzen.METADATA_PATH: "metadata",
        authzen.EVALUATION_PATH: "evaluation",
        authzen.EVALUATIONS_PATH: "evaluations",
        **{path: f"search_{kind}" for kind, path in authzen.SEARCH_PATHS.items()},
    },
}

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
App = Callable[[Scope, Receive, Send], Any]


class ErrorDice:
    """The 503 decisions: the n-th roll is True when the n-th draw of ``Random(seed)`` < rate.

    Public so a test can pick a seed that gives the sequence it needs.
    """

    def __init__(self, rate: float, seed: int | None = None) -> None:
        self.rate = rate
        self._random = random.Random(seed)

    def roll(self) -> bool:
        """True: answer this request 503."""
        return self.rate > 0 and self._random.random() < self.rate


class FaultInjector:
    """An ASGI wrapper applying :class:`Faults` to the SPEC endpoints of ``app``."""

    def __init__(
        self,
        app: App,
        faults: Faults,
        *,
        clock: Clock,
        rotate_keys: Callable[[], str],
        dialect: str = "draft",
    ) -> None:
        self.app = app
        self.faults = faults
        self.endpoints = FAULTED_ENDPOINTS[dialect]
        self._clock = clock
        self._rotate_keys = rotate_keys
        self._rotation_lock: asyncio.Lock | None = None
        self.pause: PauseGate | None = None
        self.service = ServiceGate(faults.service_time_us, faults.concurrency)
        self.restart()

    def restart(self) -> None:
        """Begin again as if the sandbox started now: the token outage and the pause
        schedule count from now, the seeded draws replay from their start, the counts are
        zero (``Sandbox.reset(faults=True)``; a pause on now ends)."""
        faults, clock = self.faults, self._clock
        if self.pause is not None:
            self.pause.end()
        self.counts = FaultCounts()
        self.service.restart()
        self._dice = ErrorDice(faults.error_rate, faults.fault_seed)
        latency_seed = None if faults.fault_seed is None else f"latency:{faults.fault_seed}"
        self._latency = random.Random(latency_seed)
        self.started_at = clock()
        every = faults.rotate_keys_every
        self._next_rotation = self.started_at + every if every else None
        self.pause = (
            None
            if faults.pause_every is None or faults.pause_ms is None
            else (
                PauseGate(
                    faults.pause_every,
                    faults.pause_ms,
                    clock=clock,
                    started_at=self.started_at,
                    counts=self.counts,
                )
            )
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.endpoints.get(scope.get("path", "")) if scope["type"] == "http" else None
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        self.counts.add(f"requests:{endpoint}")
        unavailable = self._dice.roll()  # drawn on arrival: the order a seed replays
        pause = self.pause
        if endpoint not in SERVED_ENDPOINTS:
            send = send if pause is None else pause.wrap(send, endpoint)
            await self._answer(scope, receive, send, endpoint, unavailable)
            return

        async def answer(measured: Send) -> None:
            await self._answer(scope, receive, measured, endpoint, unavailable)

        wrap = None if pause is None else (lambda inner: pause.wrap(inner, endpoint))
        await self.service.serve(endpoint, answer, send, wrap)

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, endpoint: str, unavailable: bool
    ) -> None:
        """The delay, a due rotation, then the outage, the drawn 503 or the endpoint."""
        low, high = self.faults.latency_ms
        delay_ms = (low if low == high else self._latency.uniform(low, high)) if high else 0.0
        delay_ms += self.faults.degradation_ms(self._clock() - self.started_at)
        if delay_ms:
            self.counts.add(f"delayed:{endpoint}")
            await asyncio.sleep(delay_ms / 1000.0)
        if self._next_rotation is not None and self._clock() >= self._next_rotation:
            await self._rotate()
        outage_left = self.started_at + self.faults.token_outage - self._clock()
        if endpoint == TOKEN_ENDPOINT and outage_left > 0:
            self.counts.add("token_outage")
            await _unavailable(
                receive,
                send,
                "the token service is unavailable (sandbox fault injection: token outage)",
                retry_after=math.ceil(outage_left),
            )
        elif unavailable:
            self.counts.add(f"unavailable:{endpoint}")
            await _unavailable(
                receive,
                send,
                "the service is temporarily unavailable (sandbox fault injection: error rate)",
            )
        else:
            await self.app(scope, receive, send)

    def stop(self) -> None:
        """The sandbox is stopping: release held responses
        (see :meth:`~authzkit.sandbox.pause.PauseGate.end`)."""
        if self.pause is not None:
            self.pause.end()

    async def _rotate(self) -> None:
        """One rotation per due time, however many requests arrive; keygen runs off the loop."""
        if self._rotation_lock is None:
            self._rotation_lock = asyncio.Lock()  # made inside the serving loop
        async with self._rotation_lock:
            due, now = self._next_rotation, self._clock()
            every = self.faults.rotate_keys_every
            if due is None or every is None or now < due:
                return  # another request rotated while this one waited
            try:
                await asyncio.to_thread(self._rotate_keys)
                self.counts.add("key_rotations")
            except Exception as exc:  # never a 5xx: this request is served with the old key
                log.warning("sandbox: scheduled key rotation failed (%s)", type(exc).__name__)
            # Stay on the start + k * every grid; a long quiet spell gives one rotation.
            self._next_rotation = self.started_at + every * (
                math.floor((now - self.started_at) / every) + 1
            )


async def _unavailable(
    receive: Receive, send: Send, detail: str, *, retry_after: int | None = None
) -> None:
    """Answer 503 ``srn:error:service_unavailable`` after reading the request body (so the
    connection stays usable for keep-alive)."""
    more = True
    while more:
        message = await receive()
        more = message["type"] == "http.request" and message.get("more_body", False)
    payload = json.dumps(error_body(UNAVAILABLE, detail=detail), separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(max(retry_after, 1)).encode()))
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


__all__ = [
    "FAULTED_ENDPOINTS",
    "SERVED_ENDPOINT",
    "SERVED_ENDPOINTS",
    "UNAVAILABLE",
    "ErrorDice",
    "FaultInjector",
]
