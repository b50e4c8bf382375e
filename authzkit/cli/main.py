"""``authzkit …``: one entry point; each command lives in the module that owns its concern.

A command module's ``register(subparsers)`` adds its sub-commands; heavy imports stay inside
their callables, so ``--help`` is instant. Every failure ends here as one line and an exit
code (:mod:`authzkit.cli.failures`; docs/internals.md, "One entry point").
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NoReturn

from authzkit.cli.failures import debugging, describe
from authzkit.wire.version import __version__

# Each command, and the module whose register() adds it (in the order --help lists them).
COMMANDS = {
    "token": "authzkit.cli.commands",
    "keys": "authzkit.cli.commands",
    "authorize": "authzkit.cli.commands",
    "solve": "authzkit.cli.commands",
    "demo": "authzkit.cli.commands",
    "search": "authzkit.cli.authzen",
    "sandbox": "authzkit.sandbox.command",
    "trace": "authzkit.cli.trace",
    "loadtest": "authzkit.loadtest.command",
    "report": "authzkit.loadtest.command",
    "capacity": "authzkit.loadtest.capacity.command",
    "check": "authzkit.check.command",
    "matrix": "authzkit.cli.matrix",
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))
INTERRUPTED = 130  # what a shell reports for a run stopped by Ctrl-C
# Loggers whose progress lines ("retry 1 of 2") would come before a failure's one line.
PROGRESS_LOGGERS = ("authzkit.client.retry",)


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose refusal is one line: the command, the culprit, where the
    help is (argparse's default prints the whole usage block first). Sub-command parsers
    inherit the class, so every command refuses the same way."""

    commands: Mapping[str, argparse.ArgumentParser] = {}  # each command's parser, by name

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_command_line(self, argv: Sequence[str]) -> argparse.Namespace:
        """``parse_args``, except that an option the command does not know is refused by the
        command's own parser (``authzkit token: unrecognized arguments: --bogus (see
        authzkit token --help)``), not by the top one: argparse leaves the leftovers of a
        sub-command to its parent."""
        args, extra = self.parse_known_args(argv)
        if extra:
            command = self.commands.get(getattr(args, "command", None) or "", self)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        return args


def build_parser(argv: Sequence[str] | None = None) -> CommandParser:
    """The command line's parser: every command's, or only the module of the command
    ``argv`` names (anything else, ``--help`` or a misspelt command, gets them all)."""
    parser = CommandParser(
        prog="authzkit",
        description="Explore and load-test an Authorization Decision Service. "
        "Without AUTHZKIT_BASE_URL, commands start the embedded sandbox.",
    )
    parser.add_argument("--version", action="version", version=f"authzkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = next((word for word in argv or () if not word.startswith("-")), None)
    modules = (COMMANDS[named],) if named in COMMANDS else COMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(subparsers)
    parser.commands = subparsers.choices
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code (argparse's own refusals and
    ``--help`` end in ``SystemExit``, as a console script expects)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_command_line(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    return run_command(args)


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command; any exception becomes one line on stderr and its exit code."""
    name = f"authzkit {args.command}"
    _warn_if_insecure(name)
    try:
        with _quiet_progress():
            return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # `authzkit demo | head`: the reader left; that is not an error
        sys.stderr.close()
        return 0
    except Exception as exc:  # the one boundary where every failure is worded
        if debugging():
            raise
        code, line = describe(exc)
        print(f"{name}: {line}", file=sys.stderr)
        return code


def _warn_if_insecure(name: str) -> None:
    """One line on stderr when ``AUTHZKIT_TLS_INSECURE`` turns certificate checks off (a
    malformed value is the command's own one-line refusal, a moment later)."""
    from authzkit.wire.errors import ConfigError
    from authzkit.wire.tls import INSECURE, TlsSettings
    from authzkit.wire.variables import authzkit_variables, parse_bool

    try:
        value = authzkit_variables().get(INSECURE)
        insecure = value is not None and parse_bool(INSECURE, value)
    except ConfigError:
        return
    if insecure:
        print(f"{name}: {TlsSettings(insecure=True).warning}", file=sys.stderr)


@contextmanager
def _quiet_progress() -> Iterator[None]:
    """Progress warnings silenced while a command runs: a failure is one line on stderr,
    not retries then that line (``AUTHZKIT_DEBUG=1`` shows them again)."""
    if debugging():
        yield
        return
    loggers = [logging.getLogger(name) for name in PROGRESS_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


__all__ = ["COMMANDS", "COMMAND_MODULES", "CommandParser", "build_parser", "main", "run_command"]
