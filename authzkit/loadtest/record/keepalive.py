"""HTTP/1.1 exchanges of pre-built request bytes on kept-alive sockets (plain or TLS).

The open model's hot path: the request is bytes built once, written whole; the answer is
read just far enough (status line, headers to ``Content-Length``, the body as bytes) and
parsed further only when the caller needs it (:class:`RawHeaders`). Each exchange tells
when its write began and ended and when its answer arrived (on a plain socket, the kernel's
receive stamp), for :mod:`~authzkit.loadtest.record.timing`. Sockets are gevent's inside
Locust.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from authzkit.loadtest.record.collect import AnswerCollector
from authzkit.wire.tls import TlsSettings

_READ = 65536
_clock = time.perf_counter
_wall = time.time
_SO_TIMESTAMPNS = 35  # Linux: each read carries when its data arrived (CLOCK_REALTIME)
_STAMP_SPACE = socket.CMSG_SPACE(16)
_TIMESPEC = struct.Struct("qq")


class Answer:
    """One answer as read: status, the header block (bytes), the body and the exchange's
    times (``perf_counter`` seconds: write began, write ended, answer read)."""

    __slots__ = ("body", "ended", "head", "status", "write_ended", "write_started")

    def __init__(
        self,
        status: int,
        head: bytes,
        body: bytes,
        write_started: float,
        write_ended: float,
        ended: float,
    ) -> None:
        self.status, self.head, self.body = status, head, body
        self.write_started, self.write_ended, self.ended = write_started, write_ended, ended


class RawHeaders(Mapping[str, str]):
    """An answer's header block as a case-insensitive mapping, parsed when first read."""

    def __init__(self, head: bytes) -> None:
        self._head = head
        self._parsed: dict[str, str] | None = None

    def _fields(self) -> dict[str, str]:
        if self._parsed is None:
            found: dict[str, str] = {}
            for line in self._head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name:
                    key = name.strip().lower()
                    found[key] = f"{found[key]}, {value.strip()}" if key in found else value.strip()
            self._parsed = found
        return self._parsed

    def __getitem__(self, key: str) -> str:
        return self._fields()[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields())

    def __len__(self) -> int:
        return len(self._fields())


class _Stamped:
    """A plain socket whose reads note when their data arrived (the kernel's stamp, in
    ``time.time`` seconds): an answer read late is still timed when it came. ``gone``: the
    collector saw it readable while idle (the server closed it, or sent what no request
    asked for): no request is written to it."""

    __slots__ = ("arrived", "fd", "gone", "raw", "sock")

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.raw = getattr(sock, "_sock", sock)  # gevent's socket wraps a non-blocking one
        self.fd: int = sock.fileno()  # asked at every exchange: kept, not asked of gevent
        self.arrived = 0.0
        self.gone = False

    def recv(self, size: int) -> bytes:
        return self._stamped(*self.sock.recvmsg(size, _STAMP_SPACE))

    def recv_now(self, size: int) -> bytes:
        """What has arrived, without waiting (``BlockingIOError`` when nothing has)."""
        return self._stamped(*self.raw.recvmsg(size, _STAMP_SPACE))

    def _stamped(self, data: bytes, stamps: list[tuple[int, int, bytes]], *_: Any) -> bytes:
        if stamps:
            seconds, nanoseconds = _TIMESPEC.unpack_from(stamps[0][2])
            self.arrived = seconds + nanoseconds * 1e-9
        return data

    def send(self, data: bytes) -> int:
        return self.sock.send(data)  # type: ignore[no-any-return]

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(data)

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        self.sock.close()


class InFlight:
    """A request written without waiting (:meth:`KeptAlive.send_now`): its connection,
    what of it is still unsent, its write times, what of its answer was read so far."""

    __slots__ = ("read", "sock", "unsent", "write_ended", "write_started")

    def __init__(self, sock: _Stamped, unsent: bytes, write_started: float, write_ended: float):
        self.sock, self.unsent, self.read = sock, unsent, b""
        self.write_started, self.write_ended = write_started, write_ended


class ClosedEarly(ConnectionError):
    """The server closed a kept-alive connection before any byte of the answer."""


class KeptAlive:
    """Connections to ``url``'s origin, kept alive between exchanges; as many as calls in
    flight (the open model's cap bounds them). ``tls`` secures an ``https`` origin; on a plain
    one an answer may wait for the schedule's next wake in ``collector``."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        tls: TlsSettings | None = None,
        collector: AnswerCollector | None = None,
    ) -> None:
        parts = urlsplit(url)
        self.secure = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.secure else 80)
        self.netloc = parts.netloc
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.timeout = timeout
        self.tls = tls or TlsSettings()
        self._context: Any = None
        self._idle: list[Any] = []
        self.collector = None if self.secure else collector

    def request_bytes(self, method: str, headers: Mapping[str, str], body: bytes) -> bytes:
        """The complete request, as written to the wire."""
        lines = [f"{method} {self.target} HTTP/1.1", f"Host: {self.netloc}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def _connect(self) -> Any:
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.secure:
            if self._context is None:
                self._context = self.tls.ssl_context()
            return self._context.wrap_socket(sock, server_hostname=self.host)
        try:
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        except OSError:  # no receive stamps here: answers are timed when read
            return sock
        return _Stamped(sock)

    def exchange(self, request: bytes, written: Callable[[float], Any] | None = None) -> Answer:
        """Write ``request`` (``written`` told when the write ended, once) and read its
        answer (a kept-alive connection the server closed meanwhile is replaced once);
        ``OSError`` when no answer came."""
        idle = self._take_idle()
        if idle:
            sock = idle.pop()
            told: list[Any] = []
            try:
                return self._on(sock, request, written, told)
            except (ClosedEarly, BrokenPipeError, ConnectionResetError):
                if told:  # closed while idle: once more on a new connection
                    written = None
        return self._on(self._connect(), request, written, [])

    def _take_idle(self) -> list[Any]:
        """The idle connections, the newest last, once those the server closed while they
        were idle are closed here too: a request written to one would be lost and written
        again (a server that closes idle connections after a few seconds, like uvicorn,
        closed some of the deepest ones of every run's pool)."""
        idle = self._idle
        while idle and getattr(idle[-1], "gone", False):
            idle.pop().close()
        return idle

    def _on(
        self, sock: Any, request: bytes, written: Callable[[float], Any] | None, told: list[Any]
    ) -> Answer:
        try:
            write_started = _clock()
            sent = sock.send(request)  # a request fits the socket's buffer: one write
            if sent < len(request):
                sock.sendall(request[sent:])
            write_ended = _clock()
            if written is not None:
                told.append(written(write_ended))
            if self.collector is not None and type(sock) is _Stamped:
                self.collector.wait(sock, write_ended + self.timeout)
            status, head, body, keep = _read_answer(sock)
        except BaseException:
            sock.close()
            raise
        return self._done(sock, status, head, body, keep, write_started, write_ended)

    def send_now(self, request: bytes) -> InFlight | None:
        """Begin writing ``request`` on an idle plain connection whose answer the collector
        can wait for, without blocking; ``None`` when there is none or the write cannot
        begin (then :meth:`exchange` is the way)."""
        idle = self._take_idle()
        if not idle or self.collector is None:
            return None
        sock = idle[-1]
        if type(sock) is not _Stamped:
            return None
        write_started = _clock()
        try:
            sent = sock.raw.send(request)
        except OSError:  # closed while idle, or its buffer full: the usual way
            return None
        idle.pop()
        return InFlight(sock, request[sent:], write_started, _clock())

    def read_now(self, flight: InFlight) -> Answer | None:
        """``flight``'s answer when all of it has arrived (read without waiting), else
        ``None``: :meth:`finish` reads the rest."""
        if flight.unsent:
            return None
        sock = flight.sock
        try:
            read = flight.read = flight.read + sock.recv_now(_READ)
        except OSError:  # nothing yet, or an error the usual read meets again
            return None
        end = read.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = read[:end]
        status, _, keep, length = _head(head)
        if length is None or len(read) != end + 4 + length:
            return None  # not whole yet, or no length: the usual read goes on
        return self._done(
            sock,
            status,
            head,
            read[end + 4 :],
            keep,
            flight.write_started,
            flight.write_ended,
            watched=True,
        )

    def finish(self, flight: InFlight) -> Answer:
        """Write the rest of ``flight`` and read its whole answer, waiting as needed (in a
        greenlet of its own); ``OSError`` when no answer came."""
        sock = flight.sock
        try:
            if flight.unsent:
                sock.sendall(flight.unsent)
                flight.unsent = b""
            status, head, body, keep = _read_answer(sock, flight.read)
        except BaseException:
            sock.close()
            raise
        return self._done(sock, status, head, body, keep, flight.write_started, flight.write_ended)

    def abandon(self, flight: InFlight) -> None:
        """Close ``flight``'s connection: its answer is not waited for any more."""
        flight.sock.close()

    def _done(
        self,
        sock: Any,
        status: int,
        head: bytes,
        body: bytes,
        keep: bool,
        write_started: float,
        write_ended: float,
        *,
        watched: bool = False,
    ) -> Answer:
        """The answer read on ``sock``, timed when the last of it arrived (its receive
        stamp, on this clock), and the connection kept or closed (``watched``: the
        collector already watches it)."""
        ended = _clock()
        if type(sock) is _Stamped:
            ended = min(max(sock.arrived - (_wall() - ended), write_ended), ended)
            sock.gone = False  # readable before this answer was read: it was this answer
        if keep:
            if not watched and self.collector is not None and type(sock) is _Stamped:
                self.collector.watch(sock)  # idle, its close by the server is seen
            self._idle.append(sock)
        else:
            sock.close()
        return Answer(status, head, body, write_started, write_ended, ended)

    def close(self) -> None:
        """Close every idle connection."""
        for sock in self._idle:
            sock.close()
        self._idle.clear()


def _head(head: bytes) -> tuple[int, bytes, bool, int | None]:
    """An answer's header block read: (status, the block lowered, whether the connection
    stays open, its ``Content-Length`` or ``None``)."""
    lowered = head.lower()
    keep = b"connection: close" not in lowered and not head.startswith(b"HTTP/1.0")
    at = lowered.find(b"\r\ncontent-length:")
    length = None
    if at >= 0:
        stop = lowered.find(b"\r\n", at + 17)
        length = int(head[at + 17 : stop if stop >= 0 else len(head)])
    return int(head[9:12]), lowered, keep, length


def _read_answer(sock: Any, buffer: bytes = b"") -> tuple[int, bytes, bytes, bool]:
    """(status, header block, body, whether the connection stays open), read after what
    ``buffer`` already holds of it."""
    if not buffer:
        buffer = sock.recv(_READ)
    if not buffer:
        raise ClosedEarly("connection closed before the answer")
    end = buffer.find(b"\r\n\r\n")
    while end < 0:
        more = sock.recv(_READ)
        if not more:
            raise ConnectionError("connection closed inside the answer's headers")
        buffer += more
        end = buffer.find(b"\r\n\r\n")
    head = buffer[:end]
    status, lowered, keep, length = _head(head)
    if length is not None:
        total = end + 4 + length
        while len(buffer) < total:
            more = sock.recv(max(total - len(buffer), _READ))
            if not more:
                raise ConnectionError("connection closed inside the answer's body")
            buffer += more
        return status, head, buffer[end + 4 : total], keep
    if b"transfer-encoding: chunked" in lowered:
        return status, head, _chunked(sock, buffer[end + 4 :]), keep
    if status in (204, 304) or 100 <= status < 200:
        return status, head, b"", keep
    rest = [buffer[end + 4 :]]  # no length: the body ends with the connection
    while more := sock.recv(_READ):
        rest.append(more)
    return status, head, b"".join(rest), False


def _chunked(sock: Any, buffer: bytes) -> bytes:
    body: list[bytes] = []
    while True:
        line_end = buffer.find(b"\r\n")
        while line_end < 0:
            buffer += _more(sock)
            line_end = buffer.find(b"\r\n")
        size = int(buffer[:line_end].split(b";", 1)[0], 16)
        needed = line_end + 2 + size + 2
        while len(buffer) < needed:
            buffer += _more(sock)
        if size == 0:  # the last chunk (trailers are not used by this API)
            return b"".join(body)
        body.append(buffer[line_end + 2 : line_end + 2 + size])
        buffer = buffer[needed:]


def _more(sock: Any) -> bytes:
    more: bytes = sock.recv(_READ)
    if not more:
        raise ConnectionError("connection closed inside a chunked answer")
    return more


__all__ = ["Answer", "ClosedEarly", "InFlight", "KeptAlive", "RawHeaders"]
