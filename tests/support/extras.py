"""Hold a Python process to what one install line of authzkit brings.

The suite runs in one environment holding every extra, so an import that an extra does not
declare goes unseen there and crashes a user's fresh venv. :func:`held_env` writes, for one
extra, the top-level modules of every distribution installed here that the extra does NOT
bring (its requirements followed through installed metadata, transitively); the suite's
``sitecustomize`` (``support/site``) then makes importing any of them, in the child and in
every process it starts, a ``ModuleNotFoundError`` naming the extra, as in a fresh venv.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from functools import cache
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

HELD_VARIABLE = "SUITE_HELD_TO"
"""The environment variable naming the file of what a child may not import."""

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
VENV_BASE = ("pip", "setuptools")
"""What ``python -m venv`` puts in every fresh venv on Python 3.11, before any install."""


def _requires(name: str) -> list[str]:
    """The requirement lines of distribution ``name``: authzkit's from this checkout's
    pyproject.toml (what a user installs from it), any other's from its installed metadata."""
    if canonicalize_name(name) != "authzkit":
        return metadata.distribution(name).requires or []
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra, requirements in project["optional-dependencies"].items():
        lines += [f'{line}; extra == "{extra}"' for line in requirements]
    return lines


def _wanted(requirement: Requirement, extras: frozenset[str]) -> bool:
    """Whether ``requirement`` applies when its distribution is installed with ``extras``."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras | {""})


@cache
def distributions(extra: str | None, *also: str) -> frozenset[str]:
    """The distributions (canonical names) ``pip install ".[extra]"`` brings (the core for
    ``None``), plus ``also`` and what they need, as installed here."""
    todo: list[tuple[str, frozenset[str]]] = [
        ("authzkit", frozenset({extra} if extra else ())),
        *((name, frozenset()) for name in (*also, *VENV_BASE)),
    ]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        key = (str(canonicalize_name(name)), extras)
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = _requires(name)
        except metadata.PackageNotFoundError:
            continue  # an optional requirement this environment does not have
        for line in requires:
            requirement = Requirement(line)
            if _wanted(requirement, extras):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return frozenset(name for name, _ in seen)


def forbidden_modules(allowed: Iterable[str]) -> dict[str, list[str]]:
    """Each top-level module installed here that no distribution of ``allowed`` provides,
    with the distributions that do."""
    allowed = {canonicalize_name(name) for name in allowed}
    forbidden: dict[str, list[str]] = {}
    for module, owners in metadata.packages_distributions().items():
        if not re.fullmatch(r"[A-Za-z_]\w*", module) or module == "authzkit":
            continue
        if not {canonicalize_name(owner) for owner in owners} & allowed:
            forbidden[module] = sorted(set(owners))
    return forbidden


def held_env(extra: str | None, directory: Path, *also: str) -> dict[str, str]:
    """The environment variable that holds a child (and its children) to ``extra`` (and
    ``also``): a JSON file in ``directory`` names the modules it may not import."""
    name = extra or "core"
    path = directory / f"held-to-{name}{''.join('+' + a for a in also)}.json"
    label = f"authzkit[{extra}]" if extra else "authzkit (core)"
    forbidden = forbidden_modules(distributions(extra, *also))
    path.write_text(json.dumps({"install": label, "forbidden": forbidden}))
    return {HELD_VARIABLE: str(path)}


__all__ = ["HELD_VARIABLE", "distributions", "forbidden_modules", "held_env"]
