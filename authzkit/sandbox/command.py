"""``authzkit sandbox``: run the reference service in the foreground until Ctrl-C or SIGTERM.

When ready it prints the URLs and the demo resource_server credentials (it is a sandbox:
they are public demo values) and, with ``--ready-file``, writes them as JSON atomically, so
another process (the load-test command, a CI script) can wait for the file instead of
parsing output or polling a port. ``--dialect published`` speaks the provider's published
API (an OIDC issuer for tokens); ``--client-key-out FILE`` writes the demo client's private
key (for ``private_key_jwt``) to FILE, readable by its owner only, never to the terminal.
``--tls-cert FILE --tls-key FILE`` serve HTTPS (uvicorn's TLS): every URL printed and
published is then ``https://``, and the banner says which setting makes clients trust it.
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

from authzkit.sandbox.faults import MAX_SERVICE_TIME_US
from authzkit.sandbox.server_thread import ServerTls, server_tls
from authzkit.shared import options
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN, DIALECTS


def register(subparsers: Any) -> None:
    """Add ``authzkit sandbox`` to the CLI."""
    parser = subparsers.add_parser(
        "sandbox",
        help="run the reference sandbox (all endpoints of the spec) in the foreground",
        description="Serve the token, discovery and authorize endpoints plus /sandbox/v1/* "
        "on one port until Ctrl-C.",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1, loopback only)"
    )
    parser.add_argument(
        "--port", type=options.port, default=8000, help="port; 0 picks a free one (default: 8000)"
    )
    options.add_token_ttl(
        parser, 900, "access token lifetime in whole seconds >= 1, sent as expiresIn (default: 900)"
    )
    options.add_key_size(parser, "RSA key size (default: 4096, like the provider; 2048 is faster)")
    parser.add_argument(
        "--world",
        type=_world_argument,
        metavar="FILE",
        help="world file (TOML or JSON); default: the packaged demo world. With --dialect "
        "authzen: certification (default), todo, or an AuthZEN world file (JSON)",
    )
    parser.add_argument(
        "--challenge-ttl",
        type=options.positive_seconds,
        default=300,
        metavar="S",
        help="seconds a challenge stays open (default: 300)",
    )
    parser.add_argument(
        "--max-attempts",
        type=options.count(1),
        default=3,
        metavar="N",
        help="wrong answers that kill a challenge (default: 3)",
    )
    options.add_dialect(
        parser,
        "draft: the service's draft (default); published: the provider's "
        "published API, with an OpenID Connect token endpoint; authzen: the OpenID "
        "AuthZEN Authorization API 1.0 (no token endpoint)",
        choices=DIALECTS,
    )
    parser.add_argument(
        "--client-key-out",
        type=options.output_file,
        metavar="FILE",
        help="write the demo client's RSA private key (PEM, for "
        "private_key_jwt) to FILE, mode 0600",
    )
    parser.add_argument(
        "--ready-file",
        type=options.output_file,
        metavar="PATH",
        help="write base_url, auth_url, issuer, dialect, client_id, "
        "client_secret, client_key_file and pid as JSON here once ready",
    )
    add_tls_options(parser)
    add_fault_options(parser)
    parser.set_defaults(run=run)


def _world_argument(text: str) -> Path | str:
    """``--world``: a packaged AuthZEN world's name (kept as text), else an existing file."""
    from authzkit.sandbox.authzen.world import PACKAGED_WORLDS

    return text if text in PACKAGED_WORLDS else options.existing_file(text)


# The TLS flags as they are named on the command line, for messages about the pair.
TLS_FLAGS = ("--tls-cert", "--tls-key")


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert FILE`` and ``--tls-key FILE``, defined once: the sandbox serves HTTPS
    with them (both or neither; the pair is checked by :func:`tls_from_args` before
    anything starts). Their destinations are ``Sandbox(tls_cert=, tls_key=)``."""
    tls = parser.add_argument_group(
        "TLS", "serve HTTPS (uvicorn's TLS) instead of plain HTTP: give both, or neither"
    )
    tls.add_argument(
        "--tls-cert",
        type=options.existing_file,
        metavar="FILE",
        help="the server's certificate, PEM (any intermediate CA certificates after it); "
        "its names must include the host clients use (127.0.0.1, localhost …)",
    )
    tls.add_argument(
        "--tls-key",
        type=options.existing_file,
        metavar="FILE",
        help="the certificate's private key, unencrypted PEM",
    )


def tls_from_args(args: argparse.Namespace) -> ServerTls | None:
    """The checked ``--tls-cert``/``--tls-key`` pair, None for plain HTTP; a
    :class:`ConfigError` naming the flag and the path when one is missing, unreadable or
    not the other's match."""
    return server_tls(args.tls_cert, args.tls_key, names=TLS_FLAGS)


# The fault flags' destinations, as Sandbox(...) keywords, with the value meaning "none".
FAULT_DEFAULTS: dict[str, Any] = {
    "latency_ms": None,
    "error_rate": 0.0,
    "fault_seed": None,
    "token_outage": 0.0,
    "rotate_keys_every": None,
    "pause_every": None,
    "pause_ms": None,
    "service_time_us": None,
    "concurrency": None,
    "degrade_ms_per_min": 0.0,
}


def add_fault_options(parser: argparse.ArgumentParser, note: str = "") -> None:
    """The sandbox's fault-injection flags, one definition for ``authzkit sandbox`` and the
    commands that start a sandbox process and pass them on (``authzkit loadtest``)."""
    faults = parser.add_argument_group(
        "fault injection",
        f"applied to the three endpoints of the spec only; /sandbox/v1/* is never faulted{note}",
    )
    faults.add_argument(
        "--latency-ms",
        type=options.latency_range,
        metavar="N",
        default=None,
        help="delay added to every response, in ms: 5, or a range 50-200",
    )
    faults.add_argument(
        "--error-rate",
        type=options.ratio,
        default=0.0,
        metavar="R",
        help="fraction 0..1 of requests answered 503 srn:error:service_unavailable (default: 0)",
    )
    faults.add_argument(
        "--fault-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of the --error-rate draws and latency range, for reproducible runs",
    )
    faults.add_argument(
        "--token-outage",
        type=options.number(minimum=0, what="seconds"),
        default=0.0,
        metavar="S",
        help="the token endpoint answers 503 for the first S seconds",
    )
    faults.add_argument(
        "--rotate-keys-every",
        type=options.positive_seconds,
        default=None,
        metavar="S",
        help="rotate the encryption key every S seconds (the next key is "
        "made ahead: a rotation swaps keys, it does not stall the service)",
    )
    faults.add_argument(
        "--pause-every",
        type=options.positive_seconds,
        default=None,
        metavar="S",
        help="a stop-the-world pause at the start of every S-second period "
        "since start (with --pause-ms)",
    )
    faults.add_argument(
        "--pause-ms",
        type=options.positive_milliseconds,
        default=None,
        metavar="P",
        help="the pause's length in ms: no response is sent during it; held "
        "ones go out when it ends (with --pause-every)",
    )
    faults.add_argument(
        "--service-time-us",
        type=options.count(1, maximum=MAX_SERVICE_TIME_US),
        default=None,
        metavar="N",
        help="every authorize response goes out exactly N µs after its service began "
        "(held to a few µs; the time each took is measured: GET /sandbox/v1/service-time)",
    )
    faults.add_argument(
        "--concurrency",
        type=options.count(1),
        default=None,
        metavar="N",
        help="at most N authorize requests in service at once, the rest wait in line: "
        "with a service time L ms (--latency-ms, --service-time-us) the service takes "
        "at most N*1000/L requests/s",
    )
    faults.add_argument(
        "--degrade-ms-per-min",
        type=options.number(minimum=0, what="milliseconds per minute"),
        default=0.0,
        metavar="X",
        help="every response X ms slower for each minute since start: a service that "
        "degrades as it runs (what an endurance run's drift shows)",
    )


def given_faults(args: argparse.Namespace) -> dict[str, Any]:
    """The fault flags given on a command line (those not at their "none" value)."""
    return {
        name: getattr(args, name)
        for name, none in FAULT_DEFAULTS.items()
        if getattr(args, name, none) not in (none, None)
    }


def fault_arguments(faults: dict[str, Any]) -> list[str]:
    """:func:`given_faults` as ``authzkit sandbox`` flags again."""
    return [
        item
        for name, value in faults.items()
        for item in (f"--{name.replace('_', '-')}", str(value))
    ]


def write_ready_file(path: Path, content: dict[str, Any]) -> None:
    """Write ``content`` so a reader never sees a half-written file (rename is atomic)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` readable by its owner only (0600 from the first byte, atomically)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), 0o600)  # an existing partial file kept its old mode
        file.write(text)
    os.replace(partial, path)


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
                latency_ms=args.latency_ms,
                error_rate=args.error_rate,
                fault_seed=args.fault_seed,
                token_outage=args.token_outage,
                rotate_keys_every=args.rotate_keys_every,
                pause_every=args.pause_every,
                pause_ms=args.pause_ms,
                service_time_us=args.service_time_us,
                concurrency=args.concurrency,
                degrade_ms_per_min=args.degrade_ms_per_min,
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


__all__ = [
    "FAULT_DEFAULTS",
    "TLS_FLAGS",
    "add_fault_options",
    "add_tls_options",
    "fault_arguments",
    "given_faults",
    "register",
    "run",
    "tls_from_args",
    "write_private_file",
    "write_ready_file",
]
