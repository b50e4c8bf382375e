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


# The load-test notebooks run their loads in child processes, the command's own code path,
# which the CLI audit (part one) runs on both dialects; the notebook itself is audited once,
# on the published dialect, whose environment holds every secret the draft's does and the
# client's private key besides.
LOAD_NOTEBOOKS = {"06_load_test_report", "08_capacity"}


@pytest.mark.parametrize(
    "notebook",
    [p for p in NOTEBOOKS if p.stem not in LOAD_NOTEBOOKS],
    ids=[p.stem for p in NOTEBOOKS if p.stem not in LOAD_NOTEBOOKS],
)
def test_notebook_run_on_a_configured_environment_leaks_nothing(
    audit: Audit, notebook: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    audit_notebook(audit, notebook, monkeypatch, tmp_path)


@pytest.mark.parametrize("audit", ["published"], indirect=True)
@pytest.mark.parametrize(
    "notebook",
    [p for p in NOTEBOOKS if p.stem in LOAD_NOTEBOOKS],
    ids=[p.stem for p in NOTEBOOKS if p.stem in LOAD_NOTEBOOKS],
)
def test_load_notebook_run_on_a_configured_environment_leaks_nothing(
    audit: Audit, notebook: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    audit_notebook(audit, notebook, monkeypatch, tmp_path)


def audit_notebook(
    audit: Audit, notebook: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Execute ``notebook`` with the audit's environment set; nothing executed shows a secret."""
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
