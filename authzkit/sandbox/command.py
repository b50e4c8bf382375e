"""``authzkit sandbox``: run the reference service in the foreground until Ctrl-C or SIGTERM.

When ready it prints its URLs and the demo credentials (public demo values) and, with
``--ready-file``, writes them as JSON atomically, so another process can wait for the file.
``--client-key-out FILE`` writes the demo client's private key to FILE (mode 0600), never to
the terminal; over HTTPS (``--tls-cert``/``--tls-key``) the banner says how clients trust it.
Its options: :mod:`authzkit.sandbox.arguments`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from authzkit.sandbox.arguments import add_sandbox_arguments, faults_from_args, tls_from_args
from authzkit.sandbox.files import write_private_file, write_ready_file
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN


def register(subparsers: Any) -> None:
    """Add ``authzkit sandbox`` to the CLI (its options: :mod:`authzkit.sandbox.arguments`)."""
    parser = subparsers.add_parser(
        "sandbox",
        help="run the reference sandbox (all endpoints of the spec) in the foreground",
        description="Serve the token, discovery and authorize endpoints plus /sandbox/v1/* "
        "on one port until Ctrl-C.",
    )
    add_sandbox_arguments(parser)
    parser.set_defaults(run=run)


def _announce_authzen(sandbox: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The ready file and banner of an AuthZEN sandbox: its URL, metadata and world."""
    from authzkit.wire.authzen import metadata_url

    ready = {
        "base_url": sandbox.base_url,
        "metadata_url": metadata_url(sandbox.base_url),
        "dialect": sandbox.dialect,
        "world": str(args.world or "certification"),
        "pid": os.getpid(),
    }
    if args.ready_file:
        write_ready_file(Path(args.ready_file), ready)
    lines = [
        f"authzkit sandbox ready (authzen dialect, world {ready['world']})",
        f"  base URL:      {ready['base_url']}",
        f"  metadata:      {ready['metadata_url']}",
    ]
    if sandbox.tls is not None:
        lines.append(f"  TLS:           HTTPS with the certificate in {sandbox.tls.cert}")
    # The URL alone is enough: a client finds the AuthZEN metadata there.
    lines += [f"  faults:        {sandbox.faults.describe()}", *_connect_lines(sandbox)]
    lines.append("Press Ctrl-C to stop.")
    print("\n".join(lines), flush=True)
    return ready


def _announce(sandbox: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Write the client key and the ready file, print the banner; the ready file's content."""
    if sandbox.dialect == AUTHZEN:
        return _announce_authzen(sandbox, args)
    ready = {
        "base_url": sandbox.base_url,
        "auth_url": sandbox.auth_url,
        "issuer": sandbox.issuer,
        "dialect": sandbox.dialect,
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
        "pid": os.getpid(),
    }
    if args.client_key_out:
        key_file = Path(args.client_key_out).resolve()
        write_private_file(key_file, sandbox.client_key_pem)
        ready["client_key_file"] = str(key_file)
    if args.ready_file:
        write_ready_file(Path(args.ready_file), ready)
    lines = [
        f"authzkit sandbox ready ({sandbox.dialect} dialect, key size {args.key_size}, "
        f"token ttl {args.token_ttl} s)",
        f"  base URL:      {ready['base_url']}",
    ]
    if ready["issuer"]:
        lines.append(f"  issuer:        {ready['issuer']}   (OpenID Connect token endpoint)")
    else:
        lines.append(f"  auth URL:      {ready['auth_url']}")
    lines.append(f"  client id:     {ready['client_id']}")
    if ready["client_secret"]:
        lines.append(f"  client secret: {ready['client_secret']}   (demo value)")
    if "client_key_file" in ready:
        lines.append(f"  client key:    {ready['client_key_file']}   (private_key_jwt, demo value)")
    if sandbox.tls is not None:
        lines.append(f"  TLS:           HTTPS with the certificate in {sandbox.tls.cert}")
    lines += [
        f"  faults:        {sandbox.faults.describe()}",
        *_connect_lines(sandbox),
        "Press Ctrl-C to stop.",
    ]
    print("\n".join(lines), flush=True)
    return ready


def _connect_lines(sandbox: Any) -> list[str]:
    """The lines that point another terminal at the sandbox: its URL and, over HTTPS, the
    CA setting (authzkit cannot know which CA signed the certificate, so it names the
    certificate and leaves the path to the user)."""
    export = f"  export AUTHZKIT_BASE_URL={sandbox.base_url}"
    if sandbox.tls is None:
        return [
            "In another terminal, this one line points every command, load test and notebook "
            "at it:",
            export,
        ]
    return [
        "In another terminal, these lines point every command, load test and notebook at it",
        f"(AUTHZKIT_TLS_CA_FILE: the CA bundle, PEM, that signed {sandbox.tls.cert}; for a",
        "self-signed certificate, that file itself; not needed if the system trusts it already):",
        export,
        "  export AUTHZKIT_TLS_CA_FILE=/path/to/ca.pem",
    ]


def run(args: argparse.Namespace) -> int:
    """Start, announce, wait for a stop signal, stop; exit 0 on a clean stop, 2 on bad input."""
    from authzkit.sandbox.embedded import Sandbox
    from authzkit.sandbox.world import World

    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        stop.set()

    # Started with SIGINT ignored (by a load test that stops it after locust), it stays so.
    signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signals.append(signal.SIGINT)
    previous = {sig: signal.signal(sig, request_stop) for sig in signals}
    try:
        try:
            tls_from_args(args)  # named as flags; Sandbox() checks the pair again, by keyword
            faults = faults_from_args(args)  # named as flags too
            world: Any = args.world
            if args.dialect == AUTHZEN:
                if args.client_key_out:
                    raise ConfigError("--client-key-out: an AuthZEN sandbox has no OAuth client")
            elif isinstance(world, str):
                raise ConfigError(f"--world {world}: an AuthZEN world, for --dialect authzen")
            elif world is not None:
                world = World.load(world)
            sandbox = Sandbox(
                world=world,
                token_ttl=args.token_ttl,
                key_size=args.key_size,
                challenge_ttl=args.challenge_ttl,
                max_attempts=args.max_attempts,
                host=args.host,
                port=args.port,
                **faults.given(),
                dialect=args.dialect,
                tls_cert=args.tls_cert,
                tls_key=args.tls_key,
            )
            demo = None if args.dialect == AUTHZEN else sandbox.world.resource_server()
            if demo and args.client_key_out and not (demo.client_key_pem or demo.generate_key):
                raise ConfigError(
                    "--client-key-out: the world's resource_server client has "
                    "no private key (give it generate_key = true or "
                    "client_key_pem)"
                )
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
            try:
                _announce(sandbox, args)
            except OSError as exc:
                print(
                    f"authzkit sandbox: cannot write {exc.filename}: {exc.strerror or exc}",
                    file=sys.stderr,
                )
                return 2
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


__all__ = ["register", "run"]
