"""Secrets audit, part two: every notebook executed on a configured environment leaks none
of the recognizable secrets (see :mod:`support.audit`; apart from part one, so the two run on
two workers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.audit import NOTEBOOKS, Audit, assert_clean
from support.kernels import execute_notebook

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_run_on_a_configured_environment_leaks_nothing(
    audit: Audit, notebook: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    for name, value in audit.env.items():
        if name.startswith("AUTHZKIT_"):
            monkeypatch.setenv(name, value)
    document = nbformat.read(notebook, as_version=4)
    execute_notebook(
        document,
        cwd=audit.work,
        sockets=tmp_path / "kernel",
        timeout=240,
        allow_errors=True,
        store_widget_state=True,
    )
    executed = nbformat.writes(document)
    assert_clean(f"{notebook.name} executed on a configured environment", executed, audit.secrets)
