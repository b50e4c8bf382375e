"""The notebooks are what a person copies to explore their own service: they import only the
public homes (a module's face, never a module inside a layer or a side)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PUBLIC = {
    "authzkit",
    "authzkit.loadtest",
    "authzkit.check",
    "authzkit.widgets",
    "authzkit.sandbox",
    "authzkit.wire.jwe",
}


def _imported(notebook: Path) -> set[str]:
    found: set[str] = set()
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
    return {name for name in found if name.split(".")[0] == "authzkit"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_imports_only_public_homes(notebook: Path) -> None:
    assert _imported(notebook) <= PUBLIC, _imported(notebook) - PUBLIC
