"""The paths a command reads or writes, checked before anything starts: a file or
directory to write must be creatable (a real try in its nearest existing folder), one to
read must exist. :func:`check_output_path` raises :class:`ConfigError` for a path that comes
from elsewhere (a default); the ``type=`` callables turn it into argparse's one line.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from authzkit.shared.options.values import argument_type
from authzkit.wire.errors import ConfigError


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


def _existing_file(text: str) -> Path:
    """``text`` as a path to a file that exists, else a :class:`ConfigError` saying why."""
    path = Path(text).expanduser()
    if not path.is_file():
        raise ConfigError(f"{text}: no such file" if not path.exists() else f"{text}: not a file")
    return path


@argument_type
def existing_file(text: str) -> Path:
    """A ``type=`` for a file a command reads (``--world``)."""
    return _existing_file(text)


@argument_type
def existing_file_name(text: str) -> str:
    """:func:`existing_file`, kept as text (``--subjects``): Locust forwards its options to
    its workers as msgpack, which carries no :class:`~pathlib.Path`."""
    return str(_existing_file(text))


@argument_type
def existing_directory(text: str) -> Path:
    """A ``type=`` for a directory a command reads (``report DIR``)."""
    path = Path(text).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"{text}: no such directory" if not path.exists() else f"{text}: not a directory"
        )
    return path


__all__ = [
    "check_output_path",
    "existing_directory",
    "existing_file",
    "existing_file_name",
    "output_directory",
    "output_file",
    "output_file_or_stdout",
]
