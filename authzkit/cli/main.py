"""``authzkit …``: one entry point; each command lives in the module that owns its concern.

A command module exposes ``register(subparsers)``, which adds its sub-command(s) with
``set_defaults(run=callable)``; the callable takes the parsed arguments and returns the
exit code. Heavy imports stay inside those callables so ``authzkit --help`` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from authzkit import __version__
from authzkit.errors import AuthzError, ConfigError

COMMAND_MODULES = (
    "authzkit.cli.commands",       # token, keys, authorize, solve, demo
    "authzkit.sandbox.command",    # sandbox
    "authzkit.cli.trace",          # trace
    "authzkit.loadtest.command",   # loadtest, report
    "authzkit.check.command",      # check
    "authzkit.cli.matrix",         # matrix
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="authzkit",
        description="Explore and load-test an Authorization Decision Service. "
                    "Without AUTHZKIT_BASE_URL, commands start the embedded sandbox.")
    parser.add_argument("--version", action="version", version=f"authzkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except ConfigError as exc:  # nothing was wrong with the service: exit 2, like argparse
        print(f"authzkit {args.command}: {exc}", file=sys.stderr)
        return 2
    except AuthzError as exc:
        print(f"authzkit {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `authzkit demo | head`: the reader left; that is not an error
        sys.stderr.close()
        return 0


__all__ = ["COMMAND_MODULES", "build_parser", "main"]
