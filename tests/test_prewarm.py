"""The caches the xdist controller writes for its workers (support.prewarm) are the ones
pytest and hypothesis read: a worker finds them and builds nothing again."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis.configuration import storage_directory

from support.prewarm import modules_to_rewrite, rewrite_test_modules, scan_constants

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_pytest_rewrites_is_listed(request: pytest.FixtureRequest) -> None:
    listed = {path.relative_to(ROOT).as_posix() for path in modules_to_rewrite(request.config)}
    assert {"tests/conftest.py", "notebooks/conftest.py", "tests/test_prewarm.py"} <= listed
    assert "tests/support/prewarm.py" not in listed  # imported plainly, never rewritten


def test_pytest_runs_the_rewritten_module_written_for_it(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text("def test_sum():\n    total = 1 + 1\n    assert total == 3\n")
    assert rewrite_test_modules(request.config, [module]) == 1
    assert rewrite_test_modules(request.config, [module]) == 0  # found, not written again
    (pyc,) = (tmp_path / "__pycache__").iterdir()
    written = pyc.stat()

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", module.name],
        cwd=tmp_path,
        env={
            name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    # the assertion explained as only a rewritten module explains it...
    assert "assert 2 == 3" in done.stdout, done.stdout
    # ...by the pyc written here: pytest replaces a pyc it cannot use by a new file
    assert (pyc.stat().st_ino, pyc.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)


def test_the_constants_of_each_module_are_cached_where_hypothesis_looks(tmp_path: Path) -> None:
    source = b"CEILING = 987654321\nNAME = 'a constant only this module holds'\n"
    (tmp_path / "limits.py").write_bytes(source)
    assert scan_constants(tmp_path) == 1
    cached = storage_directory("constants").path / hashlib.sha1(source).hexdigest()[:16]
    assert "987654321" in cached.read_text()
