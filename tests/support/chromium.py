"""Debian's chromium driven by Playwright, for the tests that check what a reader sees.

Skips the calling test, saying why, when ``/usr/bin/chromium`` or Playwright is absent
(`.ci/run` installs chromium; Playwright comes with the ``dev`` extra). Never downloads a
browser of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless chromium (Playwright ``Browser``), closed on exit."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium (apt-get install "
            "chromium) to run the browser tests"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


__all__ = ["CHROMIUM", "chromium"]
