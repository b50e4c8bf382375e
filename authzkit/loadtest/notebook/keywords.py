"""Keyword arguments as ``authzkit loadtest``'s command line, checked by its own options.

``run(users=4, run_time="3s", max_failure_ratio=0)`` is ``authzkit loadtest -u 4 -t 3s
--max-failure-ratio 0``: each keyword is an option's ``dest`` (its long name with ``_``), and
the command line built from them is parsed by a parser made of the very definitions the
command uses (:func:`~authzkit.loadtest.arguments.add_loadtest_arguments`), so a value the
command refuses is refused here, with the same words, before anything starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from authzkit.wire.errors import ConfigError

# What a notebook run leaves to the command's terminal, or cannot do from a kernel.
REFUSED = {
    "worker": "a worker has no run of its own: start it with `authzkit loadtest --worker`",
    "quiet": "the live view replaces the command's progress lines",
}
PASSTHROUGH = "locust_args"  # the arguments after ``--``


class _Parser(argparse.ArgumentParser):
    """argparse, raising a :class:`ConfigError` instead of printing and exiting."""

    def __init__(self, caller: str, prog: str) -> None:
        super().__init__(prog=prog, add_help=False)
        self.caller = caller

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{self.caller}: {message}")


def loadtest_parser() -> argparse.ArgumentParser:
    """The options of ``authzkit loadtest``, from their one definition."""
    from authzkit.loadtest.arguments import add_loadtest_arguments

    parser = _Parser("authzkit.loadtest.run", "authzkit loadtest")
    add_loadtest_arguments(parser)
    return parser


def capacity_parser() -> argparse.ArgumentParser:
    """The options of ``authzkit capacity``, from their one definition."""
    from authzkit.loadtest.capacity.arguments import add_capacity_arguments

    parser = _Parser("authzkit.loadtest.capacity", "authzkit capacity")
    add_capacity_arguments(parser)
    return parser


def _caller(parser: argparse.ArgumentParser) -> str:
    return str(getattr(parser, "caller", parser.prog))


def keyword_names(parser: argparse.ArgumentParser | None = None) -> list[str]:
    """Every keyword :func:`command_line` takes."""
    parser = parser or loadtest_parser()
    return sorted(a.dest for a in parser._actions if a.dest not in REFUSED and a.dest != "help")


def _option(action: argparse.Action) -> str:
    longs = [s for s in action.option_strings if s.startswith("--")]
    return (longs or list(action.option_strings))[0]


def _words(action: argparse.Action, value: Any, caller: str) -> list[str]:
    """One keyword's words on the command line (none for a flag left off)."""
    option = _option(action)
    if action.nargs == 0:  # a flag: True or False only
        if not isinstance(value, bool):
            raise ConfigError(f"{caller}: {action.dest}= takes True or False")
        return [option] if value else []
    if isinstance(value, bool):
        raise ConfigError(f"{caller}: {action.dest}= takes a value, not {value}")
    text = str(value)
    return [f"{option}={text}"]  # one word: a value starting with "-" stays a value


def command_line(
    options: Mapping[str, Any], parser: argparse.ArgumentParser | None = None
) -> tuple[list[str], argparse.Namespace]:
    """The command's arguments for ``options`` (keyword → value; ``None`` leaves an option
    to its default) and what its parser (default ``authzkit loadtest``'s) makes of them; a
    :class:`ConfigError` naming the keyword or the value it refuses."""
    parser = parser or loadtest_parser()
    caller = _caller(parser)
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    argv: list[str] = []
    passthrough: list[str] = []
    for name, value in options.items():
        if name in REFUSED:
            raise ConfigError(f"{caller}: {name}= is not offered: {REFUSED[name]}")
        if name not in actions:
            raise ConfigError(
                f"{caller}: no option {name}= ({parser.prog}'s options, "
                f"with _ for -: {', '.join(keyword_names(parser))})"
            )
        if value is None:
            continue
        if name == PASSTHROUGH:
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise ConfigError(f"{caller}: {name}= takes a list of strings")
            passthrough = [str(v) for v in value]
            continue
        argv += _words(actions[name], value, caller)
    if passthrough:
        argv += ["--", *passthrough]
    return argv, parser.parse_args(argv)


__all__ = ["REFUSED", "capacity_parser", "command_line", "keyword_names", "loadtest_parser"]
