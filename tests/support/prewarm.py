"""What every pytest-xdist worker of a fresh clone would compute for itself, computed once.

The README's ``pytest -n auto`` starts four workers at the same instant, and each collects the
whole suite. In a fresh clone none finds the two caches a second run reads, so each builds
them, all four at once:

- pytest's rewritten test modules (``__pycache__/test_x.cpython-311-pytest-*.pyc``): about
  4 s of CPU per worker for the suite's 130-odd test modules and conftests;
- hypothesis's constants of the package's modules (``.hypothesis/constants/``: literals of
  the code under test that it mixes into generated examples), gathered when hypothesis first
  generates, which schemathesis does while it collects: about 3 s per worker.

:func:`warm` (called by the xdist controller before it starts the workers) writes both, the
rewritten modules here and the constants in a child process meanwhile, so the two cores are
both busy; then every worker reads them as it would on a second run. Each is written by the
library's own functions, exactly as a worker would write it; a warm tree costs a stat per
file. Should a newer pytest or hypothesis move those functions, nothing is written and the
workers build the caches themselves, as before.
"""

from __future__ import annotations

import subprocess
import sys
import types
from fnmatch import fnmatch
from pathlib import Path

import pytest


def warm(config: pytest.Config) -> None:
    """Both caches for the workers ``config``'s run is about to start."""
    scan = subprocess.Popen(  # in the workers' working directory: .hypothesis/ is there
        [sys.executable, __file__, str(config.rootpath / "authzkit")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        rewrite_test_modules(config, modules_to_rewrite(config))
    finally:
        try:
            scan.wait(timeout=120)
        except subprocess.TimeoutExpired:  # the workers will scan for themselves
            scan.kill()
            scan.wait()


def modules_to_rewrite(config: pytest.Config) -> list[Path]:
    """Every test module and conftest under ``config``'s ``testpaths``: what pytest rewrites."""
    patterns = [*config.getini("python_files"), "conftest.py"]
    return [
        path
        for folder in config.getini("testpaths")
        for path in sorted(Path(config.rootpath, folder).rglob("*.py"))
        if any(fnmatch(path.name, pattern) for pattern in patterns)
    ]


def rewrite_test_modules(config: pytest.Config, paths: list[Path]) -> int:
    """Writes the rewritten pyc of each of ``paths`` whose pyc is missing or stale, as
    pytest's import hook would; returns how many it wrote."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )

        state = config.stash[assertstate_key]
    except (ImportError, KeyError):  # another pytest, or --assert=plain: nothing to share
        return 0
    if sys.dont_write_bytecode:  # pytest's hook would write nothing either
        return 0
    written = 0
    for path in paths:
        pyc = get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is not None or not try_makedirs(pyc.parent):
            continue
        source_hash, code = _rewrite_test(path, config)
        _write_pyc(state, code, source_hash, pyc)
        written += 1
    return written


def scan_constants(package: Path) -> int:
    """Hypothesis's cached constants of every module of ``package``; returns how many
    modules it read (hypothesis skips a module whose cache is there)."""
    try:
        from hypothesis.internal.constants_ast import constants_from_module
    except ImportError:  # another hypothesis: each worker scans for itself
        return 0
    modules = sorted(package.rglob("*.py"))
    for path in modules:
        module = types.ModuleType(path.stem)
        module.__file__ = str(path)
        constants_from_module(module)
    return len(modules)


__all__ = ["modules_to_rewrite", "rewrite_test_modules", "scan_constants", "warm"]

if __name__ == "__main__":  # the child of warm(): python prewarm.py PACKAGE_DIR
    scan_constants(Path(sys.argv[1]))
