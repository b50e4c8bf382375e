"""An ASGI app served by uvicorn on a daemon thread, on a socket bound before it starts.

Bound first so the app knows its URL; works the same in a script, under pytest and in a
running Jupyter kernel; access logs off (docs/internals.md, "The server thread").
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authzkit.wire.errors import ConfigError


@dataclass(frozen=True)
class ServerTls:
    """The certificate (PEM, the chain a client needs after it) and the unencrypted PEM key
    a server presents; checked to load together by :func:`server_tls`."""

    cert: Path
    key: Path


def server_tls(
    cert: str | os.PathLike[str] | None,
    key: str | os.PathLike[str] | None,
    *,
    names: tuple[str, str] = ("tls_cert", "tls_key"),
) -> ServerTls | None:
    """The checked certificate and key to serve HTTPS with, or ``None`` for plain HTTP
    (neither given). Both or neither; each a readable file; the certificate a PEM one and
    the key its own, unencrypted (uvicorn would otherwise ask for a pass phrase on the
    terminal, or fail on the first handshake). Else a :class:`ConfigError` naming the
    setting (``names``: how the two are called where they were given) and the path, never
    what the file holds."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        given, missing = names if cert is not None else names[::-1]
        raise ConfigError(f"{missing} is missing: {given} needs it (give both, or neither)")
    tls = ServerTls(_readable(names[0], cert), _readable(names[1], key))
    _check_certificate(names[0], tls.cert)
    _check_key(names, tls)
    return tls


def _readable(name: str, value: str | os.PathLike[str]) -> Path:
    """``value`` as an absolute path (shown to users in other directories) to a file that
    can be read, else a :class:`ConfigError`."""
    path = Path(value).expanduser().absolute()
    try:
        with path.open("rb"):
            pass
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"{name}: {path} is a directory, not a PEM file") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read {path} ({exc.strerror or exc})") from None
    return path


def _check_certificate(name: str, path: Path) -> None:
    """A :class:`ConfigError` unless ``path`` holds a PEM certificate (loaded as trust
    anchors: the one OpenSSL call that reads certificates alone)."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=str(path))
    except ssl.SSLError:
        raise ConfigError(f"{name}: {path} holds no PEM certificate") from None


def _no_password() -> bytes:
    """OpenSSL's pass phrase callback: an encrypted key is refused, never prompted for."""
    return b""


def _check_key(names: tuple[str, str], tls: ServerTls) -> None:
    """A :class:`ConfigError` unless the key loads with the certificate, as the server will
    load them."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(
            tls.cert, tls.key, password=_no_password
        )
    except ssl.SSLError as exc:
        if "MISMATCH" in (exc.reason or ""):
            problem = f"is not the key of the certificate in {names[0]} ({tls.cert})"
        else:
            problem = "holds no unencrypted PEM private key"
        raise ConfigError(f"{names[1]}: {tls.key} {problem}") from None


class ServerThread:
    """One listening socket, then (:meth:`serve`) uvicorn answering on it until :meth:`stop`."""

    def __init__(self, host: str, port: int) -> None:
        self._socket = bind(host, port)
        self.port: int = self._socket.getsockname()[1]
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def serve(self, app: Any, *, name: str, url: str, tls: ServerTls | None = None) -> None:
        """Serve ``app`` (over HTTPS with ``tls``); returns once requests are answered (a
        failure to start raises a :class:`ConfigError` naming ``url``)."""
        import uvicorn

        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",  # no WebSocket endpoint: not importing a protocol saves ~15 ms a start
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
            ssl_certfile=tls.cert if tls else None,
            ssl_keyfile=tls.key if tls else None,
        )
        self._server = _tls_server(config) if tls else uvicorn.Server(config)
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


# How often a stopping TLS server looks for connections that wait for a TLS goodbye.
_ABORT_EVERY = 0.1


def _tls_server(config: Any) -> Any:
    """A uvicorn server that stops as fast over TLS as over plain HTTP.

    On shutdown uvicorn closes idle keep-alive connections; over plain HTTP that is
    immediate, but a TLS transport's close sends close_notify and waits for the peer's (30 s
    in asyncio). A client keeping an idle connection in its pool never answers, so uvicorn
    gave up only after its graceful timeout, with an ERROR line. A connection that is
    closing and has handed all its bytes to the kernel has nothing left to say, so this
    server aborts it instead of waiting (the kernel still sends what it holds); connections
    still answering a request finish first, then go the same way.
    """
    import asyncio

    import uvicorn

    class TlsServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            aborting = asyncio.get_running_loop().create_task(self._abort_closing())
            try:
                await super().shutdown(sockets)
            finally:
                aborting.cancel()

        async def _abort_closing(self) -> None:
            while True:
                for connection in list(self.server_state.connections):
                    transport: Any = getattr(connection, "transport", None)
                    if transport is not None and _said_all(transport):
                        transport.abort()
                await asyncio.sleep(_ABORT_EVERY)

    return TlsServer(config)


def _said_all(transport: Any) -> bool:
    """True for a TLS transport that is closing with nothing left in its write buffer."""
    return bool(transport.is_closing() and transport.get_write_buffer_size() == 0)


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


__all__ = ["ServerThread", "ServerTls", "bind", "server_tls"]
