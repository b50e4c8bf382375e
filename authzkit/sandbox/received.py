"""What the sandbox received: a switchable record of the exchanges on the service's
endpoints, secrets masked as they are recorded (:mod:`authzkit.wire.redact`).

Off by default; never records ``/sandbox/v1/*``; sits outside fault injection
(docs/internals.md, "What the sandbox received").
"""

from __future__ import annotations

import base64
import json
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from authzkit.wire.locks import LazilyLocked
from authzkit.wire.redact import SECRET_KEYS, mask, mask_mapping

RECEIVED_KEPT = 10_000
SANDBOX_PREFIX = "/sandbox/v1/"
MAX_RECORDED_BODY = 64 * 1024
_SECRET_HEADERS = SECRET_KEYS | {"cookie"}

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
App = Callable[[Scope, Receive, Send], Any]


@dataclass(frozen=True)
class Received:
    """One exchange the sandbox answered, secrets already masked: ``endpoint``
    (``authorize``, ``token``, ``keys``, or the path), the ``subject`` of an authorize
    request's session token (None elsewhere), the request (``form`` when its body was a
    form) and the response. Bodies are parsed JSON (or form fields); a body that is neither
    is described, not kept."""

    endpoint: str
    subject: str | None
    method: str
    url: str
    status: int
    elapsed_ms: float
    started_at: float
    request_headers: Mapping[str, str] = field(default_factory=dict)
    request_body: Any = None
    response_headers: Mapping[str, str] = field(default_factory=dict)
    response_body: Any = None
    form: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "request_headers": dict(self.request_headers),
            "response_headers": dict(self.response_headers),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Received:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _subject_of(body: bytes) -> str | None:
    """The ``sub`` of an authorize body's session token (a JWT of this sandbox: its payload
    is read, not verified; the subject is no secret, the token stays masked)."""
    try:
        token = json.loads(body)["subject"]["token"]
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    sub = claims.get("sub") if isinstance(claims, dict) else None
    return sub if isinstance(sub, str) else None


def _header_name(raw: bytes) -> str:
    """``content-type`` as ``Content-Type`` (how the client's recorder writes headers)."""
    return "-".join(part.capitalize() for part in raw.decode("latin-1").split("-"))


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Header names as ``Content-Type``, secret values masked."""
    found = {_header_name(k): v.decode("latin-1") for k, v in raw}
    found.pop("Host", None)
    return {k: mask(v) if k.lower() in _SECRET_HEADERS else v for k, v in found.items()}


def _body(body: bytes, form: bool) -> Any:
    """A body as masked JSON or form fields; a note when it is neither."""
    if not body:
        return None
    try:
        if form:
            return mask_mapping(dict(parse_qsl(body.decode("utf-8"))))
        return mask_mapping(json.loads(body))
    except (ValueError, RecursionError):
        return f"({len(body)} bytes that are not {'a form' if form else 'JSON'})"


class ReceivedLog(LazilyLocked):
    """The newest :data:`RECEIVED_KEPT` exchanges, and whether recording is on."""

    def __init__(self, *, enabled: bool = False) -> None:
        self.enabled = enabled
        self._kept: deque[Received] = deque(maxlen=RECEIVED_KEPT)

    def add(self, received: Received) -> None:
        self._kept.append(received)

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self._kept)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


class RecordingMiddleware:
    """ASGI: records each exchange of the service's endpoints into ``log`` while it is on;
    ``name_of(path)`` names the endpoint. The exchange is kept before the response's last
    byte goes out, so a client that has its answer finds it recorded."""

    def __init__(
        self, app: App, log: ReceivedLog, *, base_url: str, name_of: Callable[[str], str]
    ) -> None:
        self.app = app
        self.log = log
        self.base_url = base_url
        self.name_of = name_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not self.log.enabled or not path or path.startswith(SANDBOX_PREFIX):
            await self.app(scope, receive, send)
            return
        started_at = time.time()
        began = time.perf_counter()
        request_body = bytearray()
        status = 0
        response_headers: list[tuple[bytes, bytes]] = []
        response_body = bytearray()

        async def recording_receive() -> Any:
            message = await receive()
            if message.get("type") == "http.request" and len(request_body) < MAX_RECORDED_BODY:
                request_body.extend(message.get("body", b""))
            return message

        async def recording_send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                response_headers.extend(message.get("headers", []))
            elif message["type"] == "http.response.body":
                response_body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self._keep(
                        scope,
                        path,
                        bytes(request_body),
                        status,
                        response_headers,
                        bytes(response_body),
                        started_at,
                        began,
                    )
            await send(message)

        await self.app(scope, recording_receive, recording_send)

    def _keep(
        self,
        scope: Scope,
        path: str,
        body: bytes,
        status: int,
        response_headers: list[tuple[bytes, bytes]],
        response_body: bytes,
        started_at: float,
        began: float,
    ) -> None:
        try:
            headers = _headers(scope.get("headers", []))
            form = "form" in headers.get("Content-Type", "")
            query = scope.get("query_string", b"").decode("latin-1")
            endpoint = self.name_of(path)
            self.log.add(
                Received(
                    endpoint=endpoint,
                    subject=_subject_of(body) if endpoint == "authorize" else None,
                    method=scope.get("method", "GET"),
                    url=self.base_url + path + (f"?{query}" if query else ""),
                    status=status,
                    elapsed_ms=(time.perf_counter() - began) * 1000,
                    started_at=started_at,
                    request_headers=headers,
                    request_body=_body(body, form),
                    response_headers=_headers(response_headers),
                    response_body=_body(response_body, False),
                    form=form,
                )
            )
        except Exception:  # a record must never break an answer
            return


__all__ = ["RECEIVED_KEPT", "Received", "ReceivedLog", "RecordingMiddleware"]
