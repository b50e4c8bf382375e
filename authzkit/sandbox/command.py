"""``authzkit sandbox``: run the reference service in the foreground until Ctrl-C or SIGTERM.

When ready it prints the URLs and the demo resource_server credentials (it is a sandbox:
they are public demo values) and, with ``--ready-file``, writes them as JSON atomically, so
another process (the load-test command, a CI script) can wait for the file instead of
parsing output or polling a port.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from authzkit.errors import ConfigError
from authzkit.spec import DEFAULT_KEY_SIZE, KEY_SIZES


def register(subparsers: Any) -> None:
    """Add ``authzkit sandbox`` to the CLI."""
    parser = subparsers.add_parser(
        "sandbox", help="run the reference sandbox (all endpoints of the spec) in the foreground",
        description="Serve the token, discovery and authorize endpoints plus /sandbox/v1/* "
                    "on one port until Ctrl-C.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="interface to bind (default: 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one "
                                                               "(default: 8000)")
    parser.add_argument("--token-ttl", type=int, default=900, metavar="S",
                        help="access token lifetime in seconds, sent as expiresIn (default: 900)")
    parser.add_argument("--key-size", type=int, default=DEFAULT_KEY_SIZE, choices=KEY_SIZES,
                        help="RSA key size (default: 4096, like the provider; 2048 is faster)")
    parser.add_argument("--world", metavar="FILE",
                        help="world file (TOML or JSON); default: the packaged demo world")
    parser.add_argument("--challenge-ttl", type=float, default=300, metavar="S",
                        help="seconds a challenge stays open (default: 300)")
    parser.add_argument("--max-attempts", type=int, default=3, metavar="N",
                        help="wrong answers that kill a challenge (default: 3)")
    parser.add_argument("--ready-file", metavar="PATH",
                        help="write base_url, auth_url, client_id, client_secret and pid as "
                             "JSON here once ready")
    faults = parser.add_argument_group(
        "fault injection", "applied to the three endpoints of the spec only; /sandbox/v1/* "
                           "is never faulted")
    faults.add_argument("--latency-ms", metavar="N", default=None,
                        help="delay added to every response, in ms: 5, or a range 50-200")
    faults.add_argument("--error-rate", type=float, default=0.0, metavar="R",
                        help="fraction 0..1 of requests answered 503 "
                             "srn:error:service_unavailable (default: 0)")
    faults.add_argument("--fault-seed", type=int, default=None, metavar="N",
                        help="seed of the --error-rate draws and latency range, for "
                             "reproducible runs")
    faults.add_argument("--token-outage", type=float, default=0.0, metavar="S",
                        help="the token endpoint answers 503 for the first S seconds")
    faults.add_argument("--rotate-keys-every", type=float, default=None, metavar="S",
                        help="rotate the encryption key every S seconds")
    parser.set_defaults(run=run)


def write_ready_file(path: Path, content: dict[str, Any]) -> None:
    """Write ``content`` so a reader never sees a half-written file (rename is atomic)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def run(args: argparse.Namespace) -> int:
    """Start, announce, wait for a stop signal, stop; exit 0 on a clean stop, 2 on bad input."""
    from authzkit.sandbox.server import Sandbox
    from authzkit.sandbox.world import World

    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            world = World.load(args.world) if args.world else None
            sandbox = Sandbox(world=world, token_ttl=args.token_ttl, key_size=args.key_size,
                              challenge_ttl=args.challenge_ttl, max_attempts=args.max_attempts,
                              host=args.host, port=args.port, latency_ms=args.latency_ms,
                              error_rate=args.error_rate, fault_seed=args.fault_seed,
                              token_outage=args.token_outage,
                              rotate_keys_every=args.rotate_keys_every)
        except ConfigError as exc:
            print(f"authzkit sandbox: {exc}", file=sys.stderr)
            return 2
        if stop.is_set():
            return 0
        try:
            sandbox.start()
        except ConfigError as exc:
            print(f"authzkit sandbox: {exc}", file=sys.stderr)
            return 2
        try:
            ready = {"base_url": sandbox.base_url, "auth_url": sandbox.auth_url,
                     "client_id": sandbox.client_id, "client_secret": sandbox.client_secret,
                     "pid": os.getpid()}
            if args.ready_file:
                write_ready_file(Path(args.ready_file), ready)
            print(f"authzkit sandbox ready (key size {args.key_size}, "
                  f"token ttl {args.token_ttl} s)\n"
                  f"  base URL:      {ready['base_url']}\n"
                  f"  auth URL:      {ready['auth_url']}\n"
                  f"  client id:     {ready['client_id']}\n"
                  f"  client secret: {ready['client_secret']}   (demo value)\n"
                  f"  faults:        {sandbox.faults.describe()}\n"
                  f"Press Ctrl-C to stop.", flush=True)
            while not stop.wait(0.5):
                if not sandbox.running:
                    print("authzkit sandbox: the server stopped unexpectedly", file=sys.stderr)
                    return 1
        finally:
            sandbox.stop()
        print("authzkit sandbox stopped", flush=True)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["register", "run", "write_ready_file"]
