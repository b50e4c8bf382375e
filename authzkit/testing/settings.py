"""The settings of a sandbox the plugin starts: ``authzkit sandbox``'s own flags.

One definition: the marker's keywords (``@pytest.mark.authz(error_rate=0.5)``), the
``--authz-*`` options and the ``authz_*`` ini keys are turned into that command's flags and
parsed by the parser :func:`authzkit.sandbox.command.register` builds, so a value is
accepted or refused exactly as ``authzkit sandbox`` would, with its message. A refusal is a
:class:`~authzkit.errors.ConfigError` naming where the value came from.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from authzkit.errors import ConfigError

# Flags of ``authzkit sandbox`` that make no sense for a sandbox the plugin starts on a free
# loopback port and reads in-process.
NOT_FOR_TESTS = frozenset({"host", "port", "client_key_out", "ready_file"})
# The plugin's default RSA key size: fast key generation (the command's default is 4096).
PLUGIN_KEY_SIZE = 2048


class _Refused(argparse.ArgumentParser):
    """An argument parser that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def _sandbox_parser() -> argparse.ArgumentParser:
    """The parser of ``authzkit sandbox`` (its one definition of every flag)."""
    from authzkit.sandbox.command import register

    root = _Refused(prog="authzkit", add_help=False)
    subparsers = root.add_subparsers(parser_class=_Refused)
    register(subparsers)
    parser: argparse.ArgumentParser = subparsers.choices["sandbox"]
    return parser


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each settable destination (``error_rate``) and its flag (``--error-rate``)."""
    found: dict[str, str] = {}
    for action in parser._actions:
        if action.option_strings and action.dest not in NOT_FOR_TESTS | {"help"}:
            found[action.dest] = action.option_strings[-1]
    return found


def known_settings() -> tuple[str, ...]:
    """The keywords the marker takes (besides ``strict``), as ``authzkit sandbox`` names
    them: ``dialect``, ``world``, ``latency_ms``, ``error_rate`` …"""
    return tuple(_flags(_sandbox_parser()))


def _text(name: str, value: Any) -> str:
    if name == "latency_ms" and isinstance(value, tuple | list) and len(value) == 2:
        return f"{value[0]}-{value[1]}"
    if isinstance(value, bool) or not isinstance(value, str | int | float | Path):
        raise ConfigError(f"{name}: expected a number or a text, got {value!r}")
    return str(value)


def parse_settings(
    given: Mapping[str, Any], *, where: str, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``given`` (setting name → value) on top of ``base`` (earlier parsed settings, or
    the command's defaults with the plugin's key size), parsed by ``authzkit sandbox``'s
    parser; a :class:`ConfigError` that starts with ``where`` names a bad one."""
    parser = _sandbox_parser()
    flags = _flags(parser)
    unknown = sorted(set(given) - set(flags))
    if unknown:
        raise ConfigError(
            f"{where}: unknown argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)} (known: {', '.join(flags)}, strict)"
        )
    argv = [
        item
        for name, value in given.items()
        if value is not None
        for item in (flags[name], _text(name, value))
    ]
    try:
        parsed = vars(parser.parse_args(argv))
    except ConfigError as exc:
        message = str(exc)
        for name, flag in flags.items():
            message = message.replace(f"argument {flag}", name)
        raise ConfigError(f"{where}: {message}") from None
    settings = {name: parsed[name] for name in flags}
    if base is None:
        base = {**settings, "key_size": PLUGIN_KEY_SIZE}
    return {**base, **{name: settings[name] for name, value in given.items() if value is not None}}


def sandbox_keywords(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``Sandbox(...)`` keywords of parsed settings (the flags' destinations are its
    keyword names; the world file is loaded here, so a broken one is named)."""
    from authzkit.sandbox.world import World

    keywords = dict(settings)
    world = keywords.pop("world", None)
    keywords["world"] = World.load(world) if world is not None else None
    return keywords


def settings_key(settings: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A hashable key of parsed settings: one sandbox per distinct configuration."""
    return tuple(sorted((name, repr(value)) for name, value in settings.items()))


__all__ = [
    "NOT_FOR_TESTS",
    "PLUGIN_KEY_SIZE",
    "known_settings",
    "parse_settings",
    "sandbox_keywords",
    "settings_key",
]
