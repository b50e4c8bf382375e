"""A person's view of ``authzkit.loadtest.run`` in a page: Voila serves a one-cell notebook,
Chromium watches the live view's numbers change while the run goes, clicks Stop, and the
run ends early with its partial report (``run.json`` says ``interrupted``)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from support.cells import write_notebook
from support.chromium import chromium
from support.voila import voila_serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN_SECONDS = 120  # far longer than the test: only Stop can end it in time
STOPPED_WITHIN_S = 45  # from the click to the run's own display
PAGE_MS = 90_000  # Voila starts the kernel and runs the cell (the sandbox starts in the child)
CELL = (
    "from authzkit import loadtest\n"
    f'run = loadtest.run(users=2, run_time="{RUN_SECONDS}s", wait_time="0.05-0.1", sandbox=True, '
    "no_report=True)"
)


def _figure(page: object, key: str) -> str:
    locator = page.locator(f'.authzkit-live [data-figure="{key}"]').first  # type: ignore[attr-defined]
    return str(locator.inner_text())


def _count(text: str) -> int:
    return int(re.sub(r"\D", "", text) or 0)


def test_the_live_view_counts_while_the_run_goes_and_stop_ends_it(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "live.ipynb", CELL)
    with voila_serving(notebook) as url, chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(PAGE_MS)
        page.goto(url, timeout=PAGE_MS)
        page.locator('.authzkit-live[data-state="running"]').wait_for(timeout=PAGE_MS)
        page.wait_for_function(
            "() => /[1-9]/.test(document.querySelector("
            "'.authzkit-live [data-figure=\"requests\"]')?.textContent || '')",
            timeout=PAGE_MS,
        )
        first = _count(_figure(page, "requests"))
        page.wait_for_function(
            f"() => parseInt((document.querySelector("
            f"'.authzkit-live [data-figure=\"requests\"]').textContent || '0')"
            f".replace(/\\D/g, '')) > {first}",
            timeout=30_000,
        )
        assert _count(_figure(page, "requests")) > first
        assert _figure(page, "elapsed").endswith(" s")
        page.locator(".authzkit-stop").click()
        clicked = time.monotonic()
        page.locator(".authzkit-run-figures").wait_for(timeout=STOPPED_WITHIN_S * 1000)
        assert time.monotonic() - clicked < STOPPED_WITHIN_S < RUN_SECONDS
        assert "Interrupted by SIGINT" in page.inner_text("body")
    (run_dir,) = (tmp_path / "loadtest-out").iterdir()
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["interrupted"] == "SIGINT"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["requests"] > first
