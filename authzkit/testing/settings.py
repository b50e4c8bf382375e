"""The settings of a sandbox the plugin starts: ``authzkit sandbox``'s own flags.

Marker keywords, ``--authz-*`` options and ``authz_*`` ini keys become that command's flags,
so a value is accepted or refused exactly as ``authzkit sandbox`` would; ``tls_ca`` is the
plugin's own (docs/internals.md, "The pytest plugin's sandbox settings").
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from authzkit.wire.errors import ConfigError

# Flags of ``authzkit sandbox`` that make no sense for a sandbox the plugin starts on a free
# loopback port and reads in-process.
NOT_FOR_TESTS = frozenset({"host", "port", "client_key_out", "ready_file"})
# The plugin's default RSA key size: fast key generation (the command's default is 4096).
PLUGIN_KEY_SIZE = 2048
# Settings for the plugin's clients, not flags of ``authzkit sandbox`` (see the docstring).
CLIENT_SETTINGS = ("tls_ca",)
# Settings naming a file: relative to the test file (marker) or the ini file (ini key).
FILE_SETTINGS = ("world", "tls_cert", "tls_key", "tls_ca")


class _Refused(argparse.ArgumentParser):
    """An argument parser that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def _sandbox_parser() -> argparse.ArgumentParser:
    """The parser of ``authzkit sandbox`` (its one definition of every flag)."""
    from authzkit.sandbox.arguments import add_sandbox_arguments

    parser = _Refused(prog="authzkit sandbox")
    add_sandbox_arguments(parser)
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
    them: ``dialect``, ``world``, ``latency_ms``, ``error_rate`` …, then the plugin's
    ``tls_ca``."""
    return (*_flags(_sandbox_parser()), *CLIENT_SETTINGS)


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
    unknown = sorted(set(given) - set(flags) - set(CLIENT_SETTINGS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)} (known: {', '.join([*flags, *CLIENT_SETTINGS])}, strict)"
        )
    own = {
        name: _client_file(where, name, given[name]) for name in CLIENT_SETTINGS if given.get(name)
    }
    argv = [
        item
        for name, value in given.items()
        if value is not None and name in flags
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
    chosen = {name: settings[name] for name in flags if given.get(name) is not None}
    return {**base, **chosen, **own}


def _client_file(where: str, name: str, value: Any) -> Path:
    """A file setting of the plugin's own (``tls_ca``): it must exist, as the flags' do."""
    path = Path(_text(name, value)).expanduser()
    if not path.is_file():
        problem = "no such file" if not path.exists() else "not a file"
        raise ConfigError(f"{where}: {name}: {value}: {problem}")
    return path


def file_setting(name: str, value: Any, base: Path) -> Any:
    """A file setting's value with a relative path made relative to ``base``; a packaged
    AuthZEN world's name (``world="todo"``) stays a name, as ``--world todo`` does."""
    from authzkit.sandbox.authzen.world import PACKAGED_WORLDS

    if name not in FILE_SETTINGS or not isinstance(value, str | Path):
        return value
    if name == "world" and value in PACKAGED_WORLDS:
        return value
    return value if Path(value).is_absolute() else base / value


def check_dialect(settings: Mapping[str, Any]) -> None:
    """The settings that only one dialect has, once every source is merged: a packaged
    AuthZEN world needs ``dialect="authzen"``, and the faults an AuthZEN sandbox has
    nothing to act on are refused there (a :class:`ConfigError` naming both)."""
    from authzkit.sandbox.authzen.embedded import NOT_ON_AUTHZEN
    from authzkit.wire.spec import AUTHZEN

    world = settings.get("world")
    if settings.get("dialect") != AUTHZEN and isinstance(world, str):
        raise ConfigError(f"world {world!r} is an AuthZEN world: it needs dialect='authzen'")
    if settings.get("dialect") == AUTHZEN:
        for name, why in NOT_ON_AUTHZEN.items():
            if settings.get(name):
                raise ConfigError(f"{name} does not apply to an AuthZEN sandbox: {why}")


def check_tls(
    settings: Mapping[str, Any], *, names: tuple[str, str] = ("tls_cert", "tls_key")
) -> None:
    """The sandbox's certificate and key, once every source is merged: both or neither, the
    key the certificate's (a :class:`ConfigError` naming them as ``names`` and the path,
    before any sandbox starts). Checked after the merge: an ini file may give one and a
    marker the other."""
    from authzkit.sandbox.server_thread import server_tls

    server_tls(settings.get("tls_cert"), settings.get("tls_key"), names=names)


def sandbox_keywords(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``Sandbox(...)`` keywords of parsed settings (the flags' destinations are its
    keyword names; the world file is loaded here, so a broken one is named: on AuthZEN a
    packaged world's name or a JSON file)."""
    from authzkit.sandbox.authzen.world import AuthzenWorld
    from authzkit.sandbox.world import World
    from authzkit.wire.spec import AUTHZEN

    keywords = {name: value for name, value in settings.items() if name not in CLIENT_SETTINGS}
    world = keywords.pop("world", None)
    if keywords.get("dialect") == AUTHZEN:
        keywords["world"] = AuthzenWorld.coerce(world)
    else:
        keywords["world"] = World.load(world) if world is not None else None
    return keywords


def settings_key(settings: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A hashable key of parsed settings: one sandbox per distinct configuration."""
    return tuple(sorted((name, repr(value)) for name, value in settings.items()))


__all__ = [
    "CLIENT_SETTINGS",
    "FILE_SETTINGS",
    "NOT_FOR_TESTS",
    "PLUGIN_KEY_SIZE",
    "check_dialect",
    "check_tls",
    "file_setting",
    "known_settings",
    "parse_settings",
    "sandbox_keywords",
    "settings_key",
]
