"""The HTTP stack's own round trip at a given rate: geventhttpclient to a bare uvicorn +
Starlette endpoint, the same client library and server stack as the open model and the
sandbox, with nothing of either (no token, no decision, no recording).

    python benchmarks/bare_round_trip.py RATE SECONDS   # prints {"p50_us": …, "p99_us": …}

``latency_truth.py`` part 3 runs it beside each rate: the sandbox measures its service time
at the ASGI boundary, so the stack's round trip (parsing, the loopback, two processes woken
from idle) is in every figure the generator measures and in none the sandbox does.
"""

from __future__ import annotations

import json
import multiprocessing
import socket
import sys
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def _answer(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"ok": True})


def _serve(sock: socket.socket) -> None:
    app = Starlette(routes=[Route("/", _answer, methods=["POST"])])
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def round_trips(rate: float, seconds: float) -> dict[str, float]:
    """p50/p99 in µs of one POST every 1/rate s, each timed from its send to its answer."""
    import gevent
    from geventhttpclient import HTTPClient

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = multiprocessing.get_context("spawn").Process(target=_serve, args=(sock,))
    server.start()
    try:
        client = HTTPClient("127.0.0.1", sock.getsockname()[1], concurrency=4)
        deadline = time.monotonic() + 30
        while True:  # the server is up when it answers
            try:
                client.post("/", body=b"{}").read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        samples = []
        for _ in range(max(1, int(rate * seconds))):
            sent = time.perf_counter()
            client.post("/", body=b"{}").read()
            samples.append((time.perf_counter() - sent) * 1e6)
            gevent.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
        samples.sort()
        return {
            "p50_us": samples[len(samples) // 2],
            "p99_us": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
        }
    finally:
        server.terminate()
        server.join(10)


if __name__ == "__main__":
    print(json.dumps(round_trips(float(sys.argv[1]), float(sys.argv[2]))))
