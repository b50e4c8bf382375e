"""The ``authzkit`` command line: the parser and one module per group of commands.

:mod:`~authzkit.cli.main` builds the parser from each command module's ``register``;
:mod:`~authzkit.cli.commands` holds the client's commands, :mod:`~authzkit.shared.flows` the
named flows that :mod:`~authzkit.cli.demo` prints and :mod:`~authzkit.cli.trace` writes
down. The sandbox and the load test register their own commands from their packages.
"""

from authzkit.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
