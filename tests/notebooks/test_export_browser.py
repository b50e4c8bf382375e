"""A notebook's tables as a partner team reads them: the HTML export in Debian's chromium.

``notebooks/05_errors.ipynb`` (its committed outputs, not re-run) is exported with
``jupyter nbconvert --to html`` and opened 1,100 px wide: every table fits the page (no
column cut off, nothing to scroll sideways), its sentence columns are not squeezed to a
word per line, and no index column repeats information. Skips without chromium/Playwright.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.chromium import chromium

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_errors.ipynb"
WIDTH = 1100
NARROWEST_TEXT_PX = 90  # a sentence cell narrower than this reads a word per line
TABLES_SEEN = """() => [...document.querySelectorAll('table')].map((t) => {
                let box = t.parentElement;
                while (box && getComputedStyle(box).overflowX === 'visible') {
                    box = box.parentElement; }
                const text = [...t.querySelectorAll('td.text')].map(
                    (td) => td.getBoundingClientRect().width);
                return {
                    right: t.getBoundingClientRect().right,
                    clipped: box ? box.scrollWidth > box.clientWidth : false,
                    pageOverflow: document.documentElement.scrollWidth > window.innerWidth,
                    narrowestText: text.length ? Math.min(...text) : null,
                    indexHeadings: t.querySelectorAll('th.row_heading, th.index_name').length,
                    headings: [...t.querySelectorAll('thead th')].map((th) => th.innerText),
                };
            })"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
                           str(NOTEBOOK), "--output-dir", str(out)],
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return out / "05_errors.html"


def tables_seen(path: Path) -> list[dict[str, Any]]:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return page.evaluate(TABLES_SEEN)


def test_error_tables_read_at_1100_px(exported: Path) -> None:
    tables = tables_seen(exported)
    error_tables = [t for t in tables if "what the client does" in t["headings"]]
    assert len(error_tables) == 2, [t["headings"] for t in tables]
    for table in error_tables:
        assert table["headings"][0] == "type"  # the error type once, as a column
        assert not table["clipped"] and not table["pageOverflow"], table
        assert table["right"] <= WIDTH, table
        assert table["indexHeadings"] == 0, table
        assert table["narrowestText"] >= NARROWEST_TEXT_PX, table


WIDE = 1280
STATIC_COPIES_SEEN = """() => [...document.querySelectorAll('.authzkit-static-copy')].map((e) => {
                const box = e.getBoundingClientRect();
                return {height: box.height, right: box.right, text: e.innerText};
            })"""


def static_copies_offline(notebook: str, out: Path) -> list[dict[str, Any]]:
    """The static copies of notebook ``notebook``'s widgets in its HTML export, as chromium
    draws them with every network request refused (a partner team reading offline)."""
    import nbconvert
    import nbformat

    # nbformat and nbconvert declare no types for these two.
    document = nbformat.read(NOTEBOOK.with_name(notebook), as_version=4)  # type: ignore[no-untyped-call]
    exporter = nbconvert.HTMLExporter()  # type: ignore[no-untyped-call]
    page_html, _resources = exporter.from_notebook_node(document)
    path = out / notebook.replace(".ipynb", ".html")
    path.write_text(page_html, encoding="utf-8")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": WIDE, "height": 900})
        page.route("http*://**", lambda route: route.abort())
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return page.evaluate(STATIC_COPIES_SEEN)


@pytest.mark.parametrize(("notebook", "copies", "seen"), [
    ("04_challenge.ipynb", 2, "authorized"),
    ("07_conformance_and_policy.ipynb", 1, "challenge: pin"),
])
def test_widgets_read_offline_at_1280_px(tmp_path: Path, notebook: str, copies: int,
                                          seen: str) -> None:
    shown = static_copies_offline(notebook, tmp_path)
    assert len(shown) == copies, shown
    for copy in shown:
        assert copy["height"] > 40 and copy["right"] <= WIDE, copy  # drawn, not blank
        assert seen in copy["text"], copy["text"]
