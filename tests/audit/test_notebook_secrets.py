"""Secrets audit, part two: every notebook executed on a configured environment leaks none
of the recognizable secrets (see :mod:`support.audit`; apart from part one, so the two run on
two workers)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from support.audit import NOTEBOOKS, Audit, assert_clean
from support.kernels import execute_notebook

pytestmark = pytest.mark.slow


# The load-test notebooks are not run here. Their runs start sandboxes of their own
# (``sandbox=True``), which leaves the kernel's AUTHZKIT_* variables out of the command's
# environment (tests/loadtest/test_notebook_api.py): a configured environment's secrets never
# reach them, so on one they execute as under nbval, whose run of them is the suite's. The
# command's own code path on a configured environment is the CLI audit's (part one).
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


def test_every_load_notebook_starts_its_runs_on_a_sandbox_of_their_own() -> None:
    """What keeps the load notebooks out of this audit holds: each of their runs is started
    with ``sandbox=True``."""
    for notebook in [p for p in NOTEBOOKS if p.stem in LOAD_NOTEBOOKS]:
        cells = json.loads(notebook.read_text())["cells"]
        code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        starts = re.findall(r"loadtest\.(?:run|find_capacity)\((.*?)\)", code, re.S)
        assert starts, f"{notebook.name} starts no run"
        for call in starts:
            assert "sandbox=True" in call, f"{notebook.name}: a run not on its own sandbox"


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
