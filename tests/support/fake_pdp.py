"""A small scripted AuthZEN PDP for what a well-behaved one never does: metadata naming
another PDP, an echo of another request id, pages that never end. Each path is answered
by a function given the JSON body (``(status, body)``); the ``X-Request-ID`` echo is the
request's own unless ``echo`` says otherwise. Every request is kept for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, Any]


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakePdp:
    """``routes``: path → function of the body; ``echo``: ``"same"`` (default), ``None``
    (no header) or a fixed value sent back instead."""

    routes: dict[str, Callable[[Any], Answer]] = field(default_factory=dict)
    echo: str | None = "same"
    received: list[Received] = field(default_factory=list)
    base_url: str = ""
    _server: Any = None

    def start(self) -> FakePdp:
        pdp = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                pdp.received.append(Received(self.command, self.path, dict(self.headers), body))
                route = pdp.routes.get(self.path)
                status, answer = route(body) if route else (404, "not found")
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                sent = self.headers.get("X-Request-ID")
                echoed = sent if pdp.echo == "same" else pdp.echo
                if echoed is not None:
                    self.send_header("X-Request-ID", echoed)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def posted(self, path: str) -> list[Any]:
        """The bodies POSTed to ``path``, in order."""
        return [r.body for r in self.received if r.method == "POST" and r.path == path]
