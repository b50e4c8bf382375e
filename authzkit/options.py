"""The options commands share, each defined once with its type and range.

Bad input is refused while the command line is parsed, before a process, a sandbox or a
request starts: every ``type=`` here raises :class:`argparse.ArgumentTypeError`, so argparse
names the option and the value in one line and exits 2. The checks themselves raise
:class:`ConfigError` (``check_output_path``, ``run_time_seconds`` …), for values that come
from elsewhere (a default, a variable) and must be refused the same way.

Two kinds of names (keep them stable, other modules import them):

- ``add_*(parser, …)``: add a shared option (``--dialect``, ``--key-size``, ``--action`` and
  ``--challenge-action``, ``--allow-wrong-answers``, ``--token-ttl``) with its one definition;
- ``type=`` callables: :func:`count` / :func:`number` (factories with a range),
  :func:`run_time`, :func:`token_ttl`, :func:`wait_range`, :func:`latency_range`,
  :func:`action_name`, :func:`existing_file`, :func:`existing_directory`,
  :func:`output_file`,
  :func:`output_file_or_stdout`, :func:`output_directory`, :func:`port`.
"""

from __future__ import annotations

import argparse
import functools
import math
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from authzkit.config import parse_range
from authzkit.errors import ConfigError
from authzkit.spec import (
    DEFAULT_CHALLENGE_ACTION,
    DEFAULT_KEY_SIZE,
    DEFAULT_PLAIN_ACTION,
    DIALECTS,
    KEY_SIZES,
)

if TYPE_CHECKING:
    from authzkit.config import Settings

T = TypeVar("T")
_DURATION = re.compile(r"^(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?$")


def argument_type(check: Callable[[str], T]) -> Callable[[str], T]:
    """``check`` as an argparse ``type=``: its :class:`ConfigError` becomes the one line
    argparse prints (a plain ValueError would print "invalid value" and lose the reason)."""

    @functools.wraps(check)
    def parse(text: str) -> T:
        try:
            return check(text)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


# -- numbers -------------------------------------------------------------------------------


def _range_words(minimum: float | None, maximum: float | None, above: float | None) -> str:
    parts = [
        f"> {above:g}" if above is not None else "",
        f">= {minimum:g}" if minimum is not None else "",
        f"<= {maximum:g}" if maximum is not None else "",
    ]
    return " and ".join(p for p in parts if p) or "finite"


def check_number(
    value: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    what: str = "a number",
) -> float:
    """``value`` when finite and in range, else a :class:`ConfigError` saying the range."""
    if (
        not math.isfinite(value)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
        or (above is not None and value <= above)
    ):
        raise ConfigError(f"must be {what} {_range_words(minimum, maximum, above)}, got {value:g}")
    return value


def number(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    what: str = "a number",
) -> Callable[[str], float]:
    """A ``type=`` for a finite float in range: ``number(above=0)`` for a rate,
    ``number(minimum=0, maximum=1)`` for a ratio."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"must be {what}, got {text!r}") from None
        return check_number(value, minimum=minimum, maximum=maximum, above=above, what=what)

    parse.__name__ = what
    return argument_type(parse)


def count(
    minimum: int = 1, *, maximum: int | None = None, also: tuple[int, ...] = ()
) -> Callable[[str], int]:
    """A ``type=`` for a whole number >= ``minimum`` (and <= ``maximum``), or one of the
    special values ``also`` (``count(1, also=(-1,))``: -1 means one per core)."""
    special = f" (or {', '.join(str(a) for a in also)})" if also else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"must be a whole number, got {text!r}") from None
        if value in also:
            return value
        if value < minimum or (maximum is not None and value > maximum):
            upper = f" and <= {maximum}" if maximum is not None else ""
            raise ConfigError(f"must be a whole number >= {minimum}{upper}{special}, got {value}")
        return value

    parse.__name__ = "count"
    return argument_type(parse)


port = count(0, maximum=65535)
port.__doc__ = "A ``type=`` for a TCP port, 0 (pick a free one) to 65535."
positive_rate = number(above=0, what="a number per second")
ratio = number(minimum=0, maximum=1, what="a ratio")
positive_seconds = number(above=0, what="a positive number of seconds")
positive_milliseconds = number(above=0, what="a positive number of milliseconds")


# -- durations and ranges ------------------------------------------------------------------


def parse_duration(text: str | int | float) -> float:
    """Locust's ``--run-time`` syntax (``90``, ``30s``, ``2m``, ``1h30m``) in seconds."""
    value = str(text).strip().lower()
    found = _DURATION.match(value) if value else None
    if not found or not any(found.groups()):
        raise ConfigError(f"run time must look like 30s, 2m or 1h30m, got {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def run_time_seconds(text: str) -> float:
    """Locust's ``--run-time`` syntax (``90``, ``30s``, ``2m``, ``1h30m``) in seconds, at
    least one: a zero run time would make locust run until killed."""
    seconds = parse_duration(text)
    if seconds < 1:
        raise ConfigError(f"must be at least 1s (like 30s, 2m or 1h30m), got {text!r}")
    return seconds


@argument_type
def run_time(text: str) -> str:
    """A ``type=`` for ``-t/--run-time``: the text as given (locust reads it), once known
    to be a positive duration."""
    run_time_seconds(text)
    return text.strip()


@argument_type
def token_ttl(text: str) -> int:
    """A ``type=`` for an access token lifetime: whole seconds >= 1, like the sandbox."""
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"must be a whole number of seconds >= 1, got {text!r}") from None
    if value < 1:
        raise ConfigError(f"must be a whole number of seconds >= 1, got {value}")
    return value


@argument_type
def wait_range(text: str) -> str:
    """A ``type=`` for ``--wait-time``: seconds (``0.5``) or a range (``0.5-2``), kept as
    text (the users parse it again in their own process)."""
    parse_range("think time", text, unit="seconds")
    return text


@argument_type
def latency_range(text: str) -> str:
    """A ``type=`` for ``--latency-ms``: milliseconds (``5``) or a range (``50-200``)."""
    parse_range("latency", text, unit="milliseconds")
    return text


@argument_type
def action_name(text: str) -> str:
    """A ``type=`` for an action name: not empty, no spaces (``transfer_funds``)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise ConfigError(f"must be an action name without spaces, got {text!r}")
    return text


# -- paths ---------------------------------------------------------------------------------


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (where a write would start)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or ".")


def _check_writable(folder: Path, path: Path) -> None:
    """A :class:`ConfigError` unless a file can be created in ``folder``: a real try (a
    temporary file, deleted at once), since as root ``os.access`` says yes to /proc."""
    if not folder.is_dir():
        raise ConfigError(f"{path}: {folder} is not a directory")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot write in {folder} ({exc.strerror or exc.__class__.__name__})"
        ) from None


def check_output_path(path: str | Path, *, directory: bool = False) -> Path:
    """``path`` as an absolute path a command can write: a file that is not an existing
    directory, or (``directory=True``) a directory that is not an existing file; in both
    cases a place where it can be created (its nearest existing ancestor is a writable
    directory). A :class:`ConfigError` otherwise, before anything is written."""
    target = Path(path).expanduser().absolute()
    if directory and target.exists() and not target.is_dir():
        raise ConfigError(f"{path}: exists and is not a directory")
    if not directory and target.is_dir():
        raise ConfigError(f"{path}: is a directory (give a file name)")
    folder = target if directory and target.is_dir() else _nearest_existing(target.parent)
    _check_writable(folder, Path(path))
    return target


@argument_type
def output_file(text: str) -> Path:
    """A ``type=`` for a file a command writes (``--json``, ``--junit``, ``--out FILE``)."""
    return check_output_path(text)


@argument_type
def output_file_or_stdout(text: str) -> Path | str:
    """:func:`output_file`, or ``"-"`` for standard output."""
    return "-" if text == "-" else check_output_path(text)


@argument_type
def output_directory(text: str) -> Path:
    """A ``type=`` for a directory a command fills (``loadtest --out``); it may exist."""
    return check_output_path(text, directory=True)


@argument_type
def existing_file(text: str) -> Path:
    """A ``type=`` for a file a command reads (``--subjects``, ``--world``)."""
    path = Path(text).expanduser()
    if not path.is_file():
        raise ConfigError(f"{text}: no such file" if not path.exists() else f"{text}: not a file")
    return path


@argument_type
def existing_directory(text: str) -> Path:
    """A ``type=`` for a directory a command reads (``report DIR``)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"{text}: no such directory" if not path.exists() else f"{text}: not a directory"
        )
    return path


# -- shared options ------------------------------------------------------------------------


def add_dialect(parser: Any, help: str | None = None) -> None:
    """``--dialect draft|published``: what a sandbox started by the command speaks."""
    parser.add_argument(
        "--dialect",
        choices=DIALECTS,
        default=DIALECTS[0],
        help=help
        or "what an embedded sandbox speaks: the service's draft "
        "(default) or the provider's published API (OIDC token "
        "endpoint, bare 401s)",
    )


def add_key_size(parser: Any, help: str | None = None) -> None:
    """``--key-size``: the RSA key size of a sandbox the command starts."""
    parser.add_argument(
        "--key-size",
        type=int,
        choices=KEY_SIZES,
        default=DEFAULT_KEY_SIZE,
        help=help
        or "RSA key size of an embedded sandbox (default 4096, like "
        "the provider's key; ignored with AUTHZKIT_BASE_URL)",
    )


def add_token_ttl(parser: Any, default: int | None, help: str) -> None:
    """``--token-ttl S``: a sandbox's access token lifetime, whole seconds >= 1."""
    parser.add_argument("--token-ttl", type=token_ttl, default=default, metavar="S", help=help)


def add_action_options(
    parser: Any, plain_help: str | None = None, challenge_help: str | None = None
) -> None:
    """``--action`` and ``--challenge-action``: the actions a command sends (default
    ``AUTHZKIT_PLAIN_ACTION``/``AUTHZKIT_CHALLENGE_ACTION``, on a sandbox its demo ones)."""
    parser.add_argument(
        "--action",
        type=action_name,
        default=None,
        metavar="NAME",
        help=plain_help
        or "an action that needs no challenge (default: "
        "AUTHZKIT_PLAIN_ACTION; on the embedded sandbox "
        f"{DEFAULT_PLAIN_ACTION})",
    )
    parser.add_argument(
        "--challenge-action",
        type=action_name,
        default=None,
        metavar="NAME",
        help=challenge_help
        or "an action that demands a challenge (default: "
        "AUTHZKIT_CHALLENGE_ACTION; on the embedded sandbox "
        f"{DEFAULT_CHALLENGE_ACTION})",
    )


def add_allow_wrong_answers(parser: Any) -> None:
    """``--allow-wrong-answers``: consent to send a deliberately wrong answer to a real
    environment. Absent, the value is None, so ``AUTHZKIT_ALLOW_WRONG_ANSWERS`` decides."""
    parser.add_argument(
        "--allow-wrong-answers",
        action="store_true",
        default=None,
        help="on a real environment, also send the deliberately wrong answer "
        "(srn:error:bad_challenge_solution); it may count against the "
        "subject's PIN. Same as AUTHZKIT_ALLOW_WRONG_ANSWERS=1; always "
        "sent to the embedded sandbox",
    )


# -- the sandbox a command starts ----------------------------------------------------------

SANDBOX_OPTIONS = {"key_size": DEFAULT_KEY_SIZE, "dialect": DIALECTS[0]}  # name -> default


def sandbox_options(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """``--key-size`` and ``--dialect`` for the sandbox the command starts, defaults filled
    in. With an environment configured no sandbox starts, so a given one is refused (exit
    2) instead of being ignored; :func:`add_sandbox_options` leaves them None when absent."""
    given = {
        name: getattr(args, name)
        for name in SANDBOX_OPTIONS
        if getattr(args, name, None) is not None
    }
    if given and not settings.uses_sandbox:
        option = "--" + next(iter(given)).replace("_", "-")
        raise ConfigError(
            f"{option} applies to the sandbox authzkit starts; with "
            f"AUTHZKIT_BASE_URL set none starts (drop {option})"
        )
    return {**SANDBOX_OPTIONS, **given}


def add_sandbox_options(
    parser: argparse.ArgumentParser,
    dialect_help: str | None = None,
) -> None:
    """``--key-size`` and ``--dialect`` (defined above) of the
    sandbox a command starts when no environment is configured. Their value is None when
    not given, so :func:`sandbox_options` can tell a given one from the default."""
    add_key_size(
        parser,
        help=f"RSA key size of an embedded sandbox (default "
        f"{DEFAULT_KEY_SIZE}, like the provider's key; refused with "
        f"AUTHZKIT_BASE_URL)",
    )
    add_dialect(parser, help=dialect_help)
    parser.set_defaults(**dict.fromkeys(SANDBOX_OPTIONS))


__all__ = [
    "SANDBOX_OPTIONS",
    "action_name",
    "add_action_options",
    "add_allow_wrong_answers",
    "add_dialect",
    "add_key_size",
    "add_sandbox_options",
    "add_token_ttl",
    "argument_type",
    "check_number",
    "check_output_path",
    "count",
    "existing_directory",
    "existing_file",
    "latency_range",
    "number",
    "output_directory",
    "output_file",
    "output_file_or_stdout",
    "parse_duration",
    "port",
    "positive_milliseconds",
    "positive_rate",
    "positive_seconds",
    "ratio",
    "run_time",
    "run_time_seconds",
    "sandbox_options",
    "token_ttl",
    "wait_range",
]
