"""The command-line options of ``authzkit sandbox``, for its parser and for those that
build on it: ``loadtest`` and ``capacity`` forward the fault flags to the sandbox they
start, and the pytest plugin parses its marker's keywords with the same parser. The fault
flags come from their one definition, :data:`authzkit.sandbox.faults.FAULT_SETTINGS`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from authzkit.sandbox.faults import FAULT_SETTINGS, Faults
from authzkit.sandbox.server_thread import ServerTls, server_tls
from authzkit.shared import options
from authzkit.wire.spec import DIALECTS

# The TLS flags as they are named on the command line, for messages about the pair.
TLS_FLAGS = ("--tls-cert", "--tls-key")


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option of ``authzkit sandbox``; each destination is the ``Sandbox(...)``
    keyword of the same name (or ``host``/``port``/``client_key_out``/``ready_file``)."""
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


def _world_argument(text: str) -> Path | str:
    """``--world``: a packaged AuthZEN world's name (kept as text), else an existing file."""
    from authzkit.sandbox.authzen.world import PACKAGED_WORLDS

    return text if text in PACKAGED_WORLDS else options.existing_file(text)


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


def add_fault_options(parser: argparse.ArgumentParser, note: str = "") -> None:
    """The fault flags, from their definitions: ``authzkit sandbox``'s, and those of the
    commands that start a sandbox process and pass them on (``note`` says so)."""
    group = parser.add_argument_group(
        "fault injection",
        f"applied to the three endpoints of the spec only; /sandbox/v1/* is never faulted{note}",
    )
    for setting in FAULT_SETTINGS:
        group.add_argument(
            setting.flag,
            type=options.argument_type(setting.parse),
            default=setting.default,
            metavar=setting.metavar,
            help=setting.help,
        )


def fault_flags_given(args: argparse.Namespace) -> list[str]:
    """The fault flags given on a command line (not at their "none"), before the checks
    that take two flags together."""
    return [
        s.flag for s in FAULT_SETTINGS if getattr(args, s.name, s.default) not in (s.default, None)
    ]


def faults_from_args(args: argparse.Namespace) -> Faults:
    """The checked faults of a command line; a :class:`ConfigError` names the flags (a
    pause without its length, …)."""
    return Faults.checked({s.name: getattr(args, s.name) for s in FAULT_SETTINGS}, flags=True)


__all__ = [
    "TLS_FLAGS",
    "add_fault_options",
    "add_sandbox_arguments",
    "add_tls_options",
    "fault_flags_given",
    "faults_from_args",
    "tls_from_args",
]
