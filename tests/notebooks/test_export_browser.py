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
from chromium import chromium

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
