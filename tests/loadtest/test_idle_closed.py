"""A kept-alive connection the server closes while it is idle is never written to again:
the schedule's next wake sees it readable with no call on it, and the pool closes it
instead of sending the next request into a reset (which made the server see that request
twice, the lost write and its resend). Real sockets and a real epoll; no gevent."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from authzkit.loadtest.record.collect import AS_USUAL, AnswerCollector
from authzkit.loadtest.record.keepalive import KeptAlive

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


class Connection:
    """What the collector watches: a connection that keeps its descriptor (``fd``)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.fd, self.gone = sock, sock.fileno(), False


class Server:
    """Answers one request per connection it accepts, then closes that connection when
    told (``close_first``); counts the requests each connection brought."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/access/v1/authorize"
        self.requests: list[int] = []  # per accepted connection
        self.first: socket.socket | None = None
        self.answered = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.first is None:
                self.first = conn
            self.requests.append(0)
            index = len(self.requests) - 1
            conn.settimeout(5)
            try:
                if conn.recv(65536):
                    self.requests[index] += 1
                    conn.sendall(ANSWER)
                    self.answered.set()
            except OSError:
                pass

    def close_first(self) -> None:
        assert self.first is not None
        self.first.close()


@pytest.fixture
def closing_server() -> Iterator[Server]:
    found = Server()
    yield found
    found.listener.close()


class Dummy:
    """A held call on a connection of its own, so the wake has something to look at."""

    def __init__(self) -> None:
        self.outcomes: list[int] = []

    def collected(self, outcome: int) -> None:
        self.outcomes.append(outcome)


def test_a_connection_the_server_closed_while_idle_is_closed_not_written(
    closing_server: Server,
) -> None:
    collector = AnswerCollector(poller=select.epoll())
    wire = KeptAlive(closing_server.url, timeout=5, collector=collector)
    request = wire.request_bytes("POST", {}, b"{}")
    first = wire.exchange(request)
    assert first.status == 200
    assert closing_server.answered.wait(5)
    closing_server.close_first()  # idle now: the server closes it (its keep-alive ran out)
    time.sleep(0.1)  # the close reaches the client's kernel
    a, b = socket.socketpair()
    try:
        held = Dummy()
        collector.hold(Connection(a), time.perf_counter() + 5, held)
        collector.collect(None, time.perf_counter())  # the schedule's next wake
        assert held.outcomes == [AS_USUAL]
        assert wire.send_now(request) is None  # no idle connection left to write on
        second = wire.exchange(request)  # a new connection
    finally:
        a.close()
        b.close()
        wire.close()
    assert second.status == 200
    assert closing_server.requests == [1, 1]  # one each: nothing was sent into the closed one
