"""``X-Request-ID`` on AuthZEN: the PEP's value echoed on the response, or a fresh UUID
when it sent none (the spec's "Request Identification"). Wrapped outside fault injection,
so an injected 503 carries it too.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from authzkit.wire.authzen import REQUEST_ID_HEADER

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
_NAME = REQUEST_ID_HEADER.lower().encode()


class EchoRequestId:
    """ASGI wrapper: every HTTP response carries the request's ``X-Request-ID``."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope["headers"] if name == _NAME), None)
        header = (_NAME, given if given else str(uuid.uuid4()).encode())

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() != _NAME]
                message = {**message, "headers": [*kept, header]}
            await send(message)

        await self.app(scope, receive, send_with_id)


__all__ = ["EchoRequestId"]
