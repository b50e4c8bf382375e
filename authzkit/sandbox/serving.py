"""An ASGI app served by uvicorn on a daemon thread, on a socket bound before it starts.

The socket is bound first (port 0 → a free port, read back at once), so the app can be
built knowing its own URL; uvicorn then runs its own event loop in a daemon thread, which
works the same in a script, under pytest and inside a Jupyter kernel whose loop is already
running. Access logs are off: request lines would carry nothing secret, but tokens must
never be one log-format change away from a terminal.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from authzkit.errors import ConfigError


class ServerThread:
    """One listening socket, then (:meth:`serve`) uvicorn answering on it until :meth:`stop`."""

    def __init__(self, host: str, port: int) -> None:
        self._socket = bind(host, port)
        self.port: int = self._socket.getsockname()[1]
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def serve(self, app: Any, *, name: str, url: str) -> None:
        """Serve ``app``; returns once requests are answered (a failure to start raises a
        :class:`ConfigError` naming ``url``)."""
        import uvicorn

        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        thread.start()
        while not self._server.started:
            thread.join(0.01)
            if not thread.is_alive():
                self._thread = None
                raise ConfigError(f"the sandbox failed to start on {url}: {self._failure!r}")

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # reported by serve(), which waits for us
            self._failure = exc
        finally:
            self._socket.close()

    def stop(self) -> None:
        """Stop serving and wait for the thread (idempotent; closes an unused socket)."""
        thread, self._thread = self._thread, None
        if thread is None:
            self._socket.close()
            return
        self._server.should_exit = True
        thread.join(10)

    @property
    def running(self) -> bool:
        """True while the thread is serving."""
        return self._thread is not None and self._thread.is_alive()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket; port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    return sock


__all__ = ["ServerThread", "bind"]
