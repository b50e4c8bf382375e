"""Every Python child of the suite makes its RSA keys through ``support.rsa_keys`` (see there),
and a child started with ``SUITE_HELD_TO`` imports only what one extra brings
(``support.extras``).

``tests/conftest.py`` puts this folder on the ``PYTHONPATH`` its children inherit. Nothing is
imported here until the child itself imports cryptography's ``rsa`` module, so a child's own
imports keep their order (Locust's gevent patching first, for one).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

KEYS = Path(__file__).resolve().parent.parent / "rsa_keys.py"
RSA_MODULE = "cryptography.hazmat.primitives.asymmetric.rsa"


def _keys() -> ModuleType:
    """``support/rsa_keys.py``, loaded by path: a child has no ``support`` on its path."""
    spec = importlib.util.spec_from_file_location("_suite_rsa_keys", KEYS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class InstallOnImport(importlib.abc.MetaPathFinder):
    """Finds cryptography's ``rsa`` module like the other finders, and installs the pool on
    it once it has run; then steps aside."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name != RSA_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _keys().install(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if RSA_MODULE in sys.modules:  # imported by something earlier on the path: install now
    _keys().install(sys.modules[RSA_MODULE])
else:
    sys.meta_path.insert(0, InstallOnImport())


class Undeclared(importlib.abc.MetaPathFinder):
    """Refuses a module of a distribution the extra does not bring, as a fresh venv would,
    naming what is held and the distribution that has it."""

    def __init__(self, install: str, forbidden: dict[str, list[str]]) -> None:
        self.install = install
        self.forbidden = forbidden

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        owners = self.forbidden.get(name.partition(".")[0])
        if owners is None:
            return None
        raise ModuleNotFoundError(
            f"No module named {name!r} ({', '.join(owners)} is not brought by {self.install})",
            name=name,
        )


if os.environ.get("SUITE_HELD_TO"):
    with open(os.environ["SUITE_HELD_TO"], encoding="utf-8") as held:
        document = json.load(held)
    sys.meta_path.insert(0, Undeclared(document["install"], document["forbidden"]))
