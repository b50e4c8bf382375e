"""Deprecated names: the few a user may hold warn once, naming what replaces them and the
release that removes them, and still work; every other former name is gone (no import hook)."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import authzkit
from authzkit.loadtest.read.run import RunResults
from authzkit.wire import children
from authzkit.wire.deprecation import REMOVED_IN
from authzkit.wire.version import __version__

# old module path -> (its new home, a name a user imported from it)
KEPT_MODULES = {
    "authzkit.clock": ("authzkit.wire.clock", "ManualClock"),
    "authzkit.errors": ("authzkit.wire.errors", "AuthzError"),
    "authzkit.jwe": ("authzkit.wire.jwe", "KeyPair"),
    "authzkit.openapi": ("authzkit.wire.openapi", "openapi_document"),
    "authzkit.policy": ("authzkit.shared.matrix", "policy_matrix"),
    "authzkit.recorder": ("authzkit.client.exchanges", "Recorder"),
    "authzkit.client.recorder": ("authzkit.client.exchanges", "Recorder"),
}
# (module, old name) -> (what the warning names instead, what the old name still gives)
KEPT_NAMES: dict[tuple[str, str], tuple[str, object]] = {
    ("authzkit", "Environment"): ("authzkit.Connection", authzkit.Connection),
    ("authzkit.sandbox.process", "child_env"): (
        "authzkit.wire.children.child_env",
        children.child_env,
    ),
    ("authzkit.shared.connection", "DEFAULT_SUBJECT"): ("World.default_subject()", "alice"),
    ("authzkit.loadtest.read", "Run"): ("authzkit.loadtest.read.RunResults", RunResults),
    ("authzkit.loadtest.read.tables", "Run"): (
        "authzkit.loadtest.read.tables.RunResults",
        RunResults,
    ),
}
# Former names the import hook kept silently, and which no longer import.
GONE = (
    "authzkit.config",
    "authzkit.connection",
    "authzkit.consent",
    "authzkit.token",
    "authzkit.options",
    "authzkit.check.model",
    "authzkit.shared.policy",
)


def _check(caught: pytest.WarningsRecorder, old: str, new: str) -> None:
    """One DeprecationWarning, naming the old name, its replacement and the release, and
    pointing at the line of this file that imported or read the old name."""
    [warning] = caught.list
    message = str(warning.message)
    assert issubclass(warning.category, DeprecationWarning)
    assert old in message and new in message, message
    assert f"removed in authzkit {REMOVED_IN}" in message, message
    assert warning.filename == __file__


@pytest.mark.parametrize("old", sorted(KEPT_MODULES))
def test_a_kept_former_home_warns_once_and_offers_its_names(
    old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new, name = KEPT_MODULES[old]
    monkeypatch.delitem(sys.modules, old, raising=False)  # imported afresh, as a user's code does
    monkeypatch.delattr(authzkit, old.rpartition(".")[2], raising=False)
    with pytest.warns(DeprecationWarning) as caught:
        __import__(old)
    _check(caught, old, new)
    module = sys.modules[old]
    home = importlib.import_module(new)
    assert getattr(module, name) is getattr(home, name)
    assert module.__all__ == home.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(old) is module  # once: no second warning


@pytest.mark.parametrize(
    ("where", "old"), sorted(KEPT_NAMES), ids=[".".join(key) for key in sorted(KEPT_NAMES)]
)
def test_a_kept_name_warns_once_and_still_works(
    where: str, old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new, value = KEPT_NAMES[(where, old)]
    module: ModuleType = importlib.import_module(where)
    monkeypatch.delitem(vars(module), old, raising=False)  # not read yet in this process
    with pytest.warns(DeprecationWarning) as caught:
        got = getattr(module, old)
    _check(caught, f"{where}.{old}", new)
    assert got is value or got == value
    assert old not in getattr(module, "__all__", ())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(module, old) is got  # once: no second warning


def test_the_release_that_removes_them_is_one_literal_of_the_package() -> None:
    """Every warning names the same release, written once (CHANGELOG.md names it too)."""
    assert _release(REMOVED_IN) > _release(__version__)
    package = Path(authzkit.__file__).parent
    holders = [p.name for p in package.rglob("*.py") if REMOVED_IN in p.read_text()]
    assert holders == ["deprecation.py"]
    changelog = package.parent / "CHANGELOG.md"
    assert f"removed in {REMOVED_IN}" in changelog.read_text(encoding="utf-8")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_import_hook_is_gone() -> None:
    """No finder of authzkit's in ``sys.meta_path``, so an unkept former name is an
    ordinary missing module (and mypy sees what the interpreter sees)."""
    assert not any(type(finder).__module__.startswith("authzkit") for finder in sys.meta_path)
    for old in GONE:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
