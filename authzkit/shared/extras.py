"""Which optional extra provides a library, and the ``pip install`` line that brings it.

A newcomer who installed ``authzkit`` alone and runs a command that starts the sandbox
should read what to install, not ``No module named starlette``. Commands call
:func:`require` before they start anything; :mod:`authzkit.cli.main` turns any
``ModuleNotFoundError`` that still slips through into the same line.
"""

from __future__ import annotations

import importlib.util

from authzkit.wire.errors import ConfigError

# The modules authzkit imports from each extra of pyproject.toml (import names, not the names
# pip knows them by): a missing one is named with the line that installs its extra.
EXTRAS: dict[str, tuple[str, ...]] = {
    "sandbox": ("starlette", "uvicorn", "hdrh"),
    "loadtest": ("locust", "psutil", "numpy", "pandas", "matplotlib", "gevent"),
    "notebooks": ("ipywidgets",),
}


def extra_of(module: str) -> str | None:
    """The extra that installs ``module`` (a dotted name is read by its top package)."""
    top = module.split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def install_line(extra: str) -> str:
    """The command that installs ``extra`` from the authzkit checkout (the line the README
    and docs give), quoted so that every shell keeps the brackets."""
    return f'pip install -e ".[{extra}]"'


def missing_message(module: str, extra: str, what: str = "this command") -> str:
    """One line: what is missing, for what, and the line that installs it."""
    return f"{what} needs {module}, which is not installed: {install_line(extra)}"


def require(extra: str, what: str = "this command") -> None:
    """A :class:`ConfigError` naming the ``pip install`` line when a library of ``extra``
    is missing; called before anything starts, so nothing is left half-begun."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise ConfigError(missing_message(module, extra, what))


__all__ = ["EXTRAS", "extra_of", "install_line", "missing_message", "require"]
