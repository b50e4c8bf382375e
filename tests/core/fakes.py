"""A small scripted HTTP server for the cases the sandbox cannot produce.

Each route is answered from a queue of scripted replies (the last one repeats), and every
request is kept for assertions. It is a real server on port 0 in a daemon thread, so the
client under test goes through its real transport.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from authzkit.jwe import KeyPair

TOKEN = "/api/v3.1/oauth/tokens"
KEYS = "/api/v1/discovery/keys"
AUTHORIZE = "/resources/v1/authorization/actions/authorize"


@functools.cache
def _enc_key() -> KeyPair:
    return KeyPair.generate(use="enc", size=2048)


@functools.cache
def _sig_key() -> KeyPair:
    return KeyPair.generate(use="sig", size=2048)


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = None
    content_type: str = "application/json"
    delay: float = 0.0
    drop: bool = False  # close the connection without answering

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str) and self.content_type != "application/json":
            return self.body.encode()
        return json.dumps(self.body).encode() if self.body is not None else b""


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeService:
    """Scripted replies per path; ``requests[path]`` lists what arrived."""

    replies: dict[str, list[Reply]] = field(default_factory=dict)
    requests: dict[str, list[Seen]] = field(default_factory=lambda: defaultdict(list))
    base_url: str = ""
    key: KeyPair | None = None
    _server: Any = None

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path] = list(replies)

    def next_reply(self, path: str) -> Reply:
        queue = self.replies.get(path)
        if not queue:
            return Reply(404, {"type": "srn:error:not_found", "status": 404})
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def start(self) -> FakeService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # otherwise every answer waits ~40 ms for an ACK

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                service.requests[self.path].append(
                    Seen(self.command, self.path, dict(self.headers), body))
                reply = service.next_reply(self.path)
                if reply.delay:
                    threading.Event().wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = reply.encoded()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (timeout tests) is not a server failure

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- a working default service ------------------------------------------------------

    def serve_defaults(self, *, expires_in: int = 900) -> None:
        """Token, keys (a sig key listed after the enc key) and a plain 200 authorize."""
        self.key = self.key or _enc_key()
        sig = _sig_key()
        self.script(TOKEN, Reply(200, {"accessToken": "fake-access-token-0123456789abcdef",
                                       "expiresIn": expires_in, "tokenType": "Bearer"}))
        self.script(KEYS, Reply(200, {"keys": [self.key.public_jwk(), sig.public_jwk()]}))
        self.script(AUTHORIZE, Reply(200, {
            "action": {"name": "show_account_balance_public", "response": None,
                       "status": "authorized"}, "id": 1, "optional_actions": []}))
