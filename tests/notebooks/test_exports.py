"""What a partner team receives: a committed notebook exported with ``jupyter nbconvert --to
html`` and read offline.

nbconvert's HTML exporter shows a widget output's ``application/vnd.jupyter.widget-view+json``
only when the notebook holds that widget's saved state, and then as an empty ``<div>`` that
scripts from a CDN fill in: offline, the answer forms (04) and the policy explorer (07) were
blank. Committed without saved widget state, each output falls back to its ``text/html``
static copy (:mod:`authzkit.widgets.display`), which needs no script at all.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
RERUN = ("jupyter nbconvert --to notebook --execute --inplace "
         "--ExecutePreprocessor.store_widget_state=False notebooks/NN_name.ipynb")


@cache
def exported(name: str) -> str:
    """The committed notebook ``name`` as nbconvert's HTML exporter renders it."""
    document = nbformat.read(REPO / "notebooks" / name, as_version=4)
    body, _resources = nbconvert.HTMLExporter().from_notebook_node(document)
    return body


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_saved_widget_state(notebook: Path) -> None:
    """Saved state would make the export prefer the CDN-drawn widget view (blank offline)."""
    metadata = nbformat.read(notebook, as_version=4).metadata
    assert "widgets" not in metadata, f"{notebook.name} holds widget state: re-run it with {RERUN}"


@pytest.mark.parametrize(("name", "copies", "shown"), [
    ("04_challenge.ipynb", 2, ["<b>Challenge</b> for <code>transfer_funds</code>",
                               "PIN: pre-filled from the sandbox world (hidden)",
                               "TOTP code: generated from the TOTP secret",
                               "<b>authorized</b>", "Protected header of the solution"]),
    ("07_conformance_and_policy.ipynb", 1, [
        "action <code>transfer_funds</code>", "<b>challenge: pin</b>",
        "srn:error:challenge_required", "curl -sS -X POST"]),
])
def test_widgets_export_as_their_static_copy(name: str, copies: int, shown: list[str]) -> None:
    page = exported(name)
    assert page.count('class="authzkit-static-copy"') == copies
    for text in shown:
        assert text in page, text
    assert f'<script type="{WIDGET_VIEW}"' not in page  # no view waiting for a CDN script
    assert "html-manager" not in page and "embed-amd.js" not in page


def test_check_details_are_whole_sentences() -> None:
    """07's verdict tables quote the service's error description whole, not cut mid-word
    ("… the signature does not veri")."""
    page = exported("07_conformance_and_policy.ipynb")
    details = re.findall(r'<td class="data row\d+ col3[^"]*"[^>]*>(.*?)</td>', page)
    assert details, "no verdict detail found"
    quoted = [d for d in details if "invalid_client: " in d]
    assert quoted, details
    assert any("the signature does not verify" in d for d in quoted), quoted
    assert all(d.rstrip().endswith((".", ")")) for d in quoted), quoted
