"""How much of the hardware the sandbox uses: two ratios, measured side by side in one run.

1. Plain authorize req/s of the sandbox vs a bare Starlette endpoint that returns the same
   shape A JSON (same uvicorn settings, same request bytes, same load generator). Target
   >= 0.5x: token checks, body validation and counters must stay cheap.
2. Challenge-solve req/s vs the raw RSA-OAEP-256 decrypt rate of the same private key.
   Target >= 0.7x: a solve should cost little more than the RSA operation it cannot avoid.

Each server runs alone in its own process; this process is the load generator (keep-alive
connections over asyncio, pre-built request bytes). Run: ``python benchmarks/sandbox_capacity.py
[--key-size 4096] [--seconds 3] [--connections 32]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import time
from collections.abc import Callable
from typing import Any

from arguments import at_least, positive

SHAPE_A = {"action": {"name": "show_account_balance_public", "response": None,
                      "status": "authorized"}, "id": 1, "optional_actions": []}
AUTHORIZE = "/resources/v1/authorization/actions/authorize"
ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"


# ------------------------------------------------------------------ servers (child processes)
def _serve_bare(ready: Any, stop: Any) -> None:
    """A bare Starlette endpoint returning the same JSON, served like the sandbox serves."""
    import socket
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request: Request) -> JSONResponse:
        await request.body()
        return JSONResponse(SHAPE_A)

    app = Starlette(routes=[Route(AUTHORIZE, endpoint, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           lifespan="off", server_header=False,
                                           date_header=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    ready.put({"base_url": f"http://127.0.0.1:{sock.getsockname()[1]}"})
    stop.wait()
    server.should_exit = True
    thread.join(5)


def _serve_sandbox(ready: Any, stop: Any, key_size: int, commands: Any,
                   replies: Any) -> None:
    """The sandbox; on command (between load phases) it times raw decrypts of its enc key.

    The raw rate is measured in the same process, with the same key, in the gaps between
    solve batches: on a shared machine only a contemporaneous baseline gives a fair ratio.
    """
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    from authzkit.sandbox import Sandbox

    with Sandbox(key_size=key_size) as sandbox:
        private = sandbox.service.keys.encryption._private_op_key()
        oaep = padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(), None)
        wrapped = private.public_key().encrypt(b"k" * 32, oaep)
        ready.put({"base_url": sandbox.base_url, "client_id": sandbox.client_id,
                   "client_secret": sandbox.client_secret})
        while not stop.is_set():
            try:
                seconds = commands.get(timeout=0.2)
            except Exception:  # queue.Empty: nothing asked yet
                continue
            count, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds:
                private.decrypt(wrapped, oaep)
                count += 1
            replies.put(count / (time.perf_counter() - started))


# --------------------------------------------------------------------- load generator
def _request_bytes(host: str, body: bytes, access_token: str) -> bytes:
    return (f"POST {AUTHORIZE} HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {access_token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    request: bytes) -> int:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    return status


async def _drive(base_url: str, requests: Callable[[int], bytes], *, connections: int,
                 seconds: float | None = None, total: int | None = None) -> tuple[float, int]:
    """Requests per second over ``connections`` keep-alive connections; also the non-2xx count."""
    host, port = base_url.removeprefix("http://").split(":")
    streams = [await asyncio.open_connection(host, int(port)) for _ in range(connections)]
    done = 0
    unexpected = 0
    issued = iter(range(total)) if total is not None else None
    deadline = time.perf_counter() + (seconds or 0)

    async def worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal done, unexpected
        while True:
            if issued is not None:
                index = next(issued, None)
                if index is None:
                    return
            elif time.perf_counter() >= deadline:
                return
            else:
                index = done
            status = await _exchange(reader, writer, requests(index))
            done += 1
            unexpected += status != 200

    started = time.perf_counter()
    await asyncio.gather(*(worker(r, w) for r, w in streams))
    elapsed = time.perf_counter() - started
    for _, writer in streams:
        writer.close()
    return done / elapsed, unexpected


def _rate(base_url: str, request: bytes, connections: int, seconds: float) -> float:
    asyncio.run(_drive(base_url, lambda _: request, connections=connections, seconds=0.5))
    rate, unexpected = asyncio.run(_drive(base_url, lambda _: request,
                                          connections=connections, seconds=seconds))
    if unexpected:
        raise SystemExit(f"{unexpected} unexpected answers from {base_url}")
    return rate


CONTEXT = mp.get_context("spawn")


def _start(target: Callable[..., None], *args: Any) -> tuple[Any, Any, dict[str, Any]]:
    context = CONTEXT
    ready, stop = context.Queue(), context.Event()
    process = context.Process(target=target, args=(ready, stop, *args), daemon=True)
    process.start()
    return process, stop, ready.get(timeout=120)


def _stop(process: Any, stop: Any) -> None:
    stop.set()
    process.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key-size", type=int, default=4096)
    parser.add_argument("--seconds", type=positive, default=1.5)
    parser.add_argument("--connections", type=at_least(1), default=32)
    parser.add_argument("--rounds", type=at_least(1), default=5)
    args = parser.parse_args()

    import requests as http

    from authzkit.sandbox import SandboxAdmin
    from authzkit.wire import jwe

    commands, replies = CONTEXT.Queue(), CONTEXT.Queue()
    sandbox_process, sandbox_stop, info = _start(_serve_sandbox, args.key_size, commands,
                                                 replies)

    def raw_decrypt_rate(seconds: float) -> float:
        commands.put(seconds)
        return float(replies.get(timeout=seconds + 60))

    bare_process, bare_stop, bare = _start(_serve_bare)
    try:
        base_url = info["base_url"]
        host = base_url.removeprefix("http://")
        access_token = http.post(f"{base_url}/api/v3.1/oauth/tokens", json={
            "clientId": info["client_id"], "clientSecret": info["client_secret"]},
            timeout=10).json()["accessToken"]
        admin = SandboxAdmin(base_url)
        session = admin.session_token("alice")

        def authorize_body(action: str, solution: str | None = None) -> bytes:
            context: dict[str, Any] = {"request_hash": "0" * 64, "user_agent": "benchmark",
                                       "user_ip": "127.0.0.1"}
            if solution is not None:
                context["challenge_solution"] = solution
            return json.dumps({
                "action": {"name": action, "context": {
                    "resource_id": ALICE_ACCOUNT, "resource_type": "srn:resource:account"}},
                "subject": {"token": session, "context": context}, "context": {}}).encode()

        plain = _request_bytes(host, authorize_body("show_account_balance_public"),
                               access_token)
        bare_request = plain.replace(host.encode(), bare["base_url"][7:].encode(), 1)
        sandbox_rates, bare_rates = [], []
        for _ in range(args.rounds):  # short alternating rounds, so drift hits both alike
            bare_rates.append(_rate(bare["base_url"], bare_request, args.connections,
                                    args.seconds))
            sandbox_rates.append(_rate(base_url, plain, args.connections, args.seconds))
        pair_ratios = sorted(s / b for s, b in zip(sandbox_rates, bare_rates, strict=True))
        plain_ratio = pair_ratios[len(pair_ratios) // 2]
        sandbox_rate, bare_rate = max(sandbox_rates), max(bare_rates)

        # Challenge solves: issue challenges, encrypt the answers, then time only the solves,
        # in batches alternating with raw decrypt measurements of the same key.
        raw_rates = [raw_decrypt_rate(1.0)]
        batch = max(30, int(raw_rates[0] * 1.5))
        challenge_body = _request_bytes(host, authorize_body("transfer_funds"), access_token)
        keys = http.get(f"{base_url}/api/v1/discovery/keys", timeout=10).json()["keys"]
        enc_key = jwe.PublicKey.from_jwk(next(k for k in keys if k["use"] == "enc"))

        async def issue(count: int) -> list[str]:
            ids: list[str] = []
            reader, writer = await asyncio.open_connection(*host.split(":"))
            for _ in range(count):
                writer.write(challenge_body)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line[15:] for line in head.split(b"\r\n")
                                  if line[:15].lower() == b"content-length:"))
                ids.append(json.loads(await reader.readexactly(length))["challenge"]["id"])
            writer.close()
            return ids

        solved, solve_seconds = 0, 0.0
        for _ in range(3):
            solves = [_request_bytes(host, authorize_body(
                "transfer_funds", jwe.encrypt(enc_key, {"challenge_id": cid, "pin": "1234"})),
                access_token) for cid in asyncio.run(issue(batch))]
            rate, unexpected = asyncio.run(_drive(base_url, solves.__getitem__, connections=4,
                                                  total=batch))
            if unexpected:
                raise SystemExit(f"{unexpected} of {batch} solves were not authorized")
            solved += batch
            solve_seconds += batch / rate
            raw_rates.append(raw_decrypt_rate(1.0))
        solve_rate = solved / solve_seconds
        raw_rate = sum(raw_rates) / len(raw_rates)
        count = solved
    finally:
        _stop(sandbox_process, sandbox_stop)
        _stop(bare_process, bare_stop)

    print(f"plain authorize: sandbox {sandbox_rate:,.0f} req/s vs bare Starlette "
          f"{bare_rate:,.0f} req/s (best rounds); median paired ratio = {plain_ratio:.2f}x "
          f"(target >= 0.5x; {args.rounds} alternating rounds of {args.seconds:g} s, "
          f"ratios {', '.join(f'{r:.2f}' for r in pair_ratios)})")
    print(f"challenge solve: sandbox {solve_rate:,.1f} solves/s vs raw RSA-OAEP-256 decrypt "
          f"{raw_rate:,.1f}/s (RSA-{args.key_size}, same key) = {solve_rate / raw_rate:.2f}x "
          f"(target >= 0.7x; {count} solves in batches between "
          f"{len(raw_rates)} raw timings)")


if __name__ == "__main__":
    main()
