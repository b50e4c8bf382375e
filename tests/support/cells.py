"""Notebooks made in a test from code cells (nbformat declares no types)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def code_notebook(*sources: str) -> Any:
    """An nbformat v4 notebook of one code cell per source."""
    import nbformat

    cells = [nbformat.v4.new_code_cell(source) for source in sources]  # type: ignore[no-untyped-call]
    return nbformat.v4.new_notebook(cells=cells)  # type: ignore[no-untyped-call]


def write_notebook(path: Path, *sources: str) -> Path:
    """:func:`code_notebook` written to ``path``."""
    import nbformat

    nbformat.write(code_notebook(*sources), path)  # type: ignore[no-untyped-call]
    return path


__all__ = ["code_notebook", "write_notebook"]
