"""``report.html`` as a person sees it: Debian's chromium opens a real run's report.

A short challenge run (FastHttpUser, a sandbox process) writes the report; the page is
opened at 1,280 x 800 px, a laptop screen, and checked for what a reader needs: the
verdict badge and the header figures visible without scrolling, nothing wider than the
window, no JSON dump, every image decoded. The same for ``report --compare``. Needs
Debian's ``chromium`` and Playwright; skips with the reason when either is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from authzkit.cli import main
from authzkit.loadtest.read.units import duration

from support.chromium import chromium
from support.loadtest import PACED

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "authzkit",
            "loadtest",
            "--scenario",
            "challenge",
            "--fast",
            "-u",
            "4",
            "-t",
            "3s",
            "--wait-time",
            PACED,  # the page is judged, not the throughput
            "--out",
            str(out),
            "--quiet",
            "--max-failure-ratio",
            "0",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def browser() -> Any:
    with chromium() as launched:
        yield launched


def seen(browser: Any, path: Path) -> dict[str, Any]:
    """What a reader of ``path`` sees at 1,280 x 800 px, measured in the page."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return page.evaluate("""() => {
            const inView = (el) => { const r = el.getBoundingClientRect();
                return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 &&
                       r.bottom <= window.innerHeight && r.right <= window.innerWidth; };
            return {
                badge: document.querySelector('#verdict')?.textContent ?? null,
                badgeInView: !!document.querySelector('#verdict') &&
                             inView(document.querySelector('#verdict')),
                figures: [...document.querySelectorAll('#figures .figure')].map(
                    (el) => ({text: el.innerText, inView: inView(el)})),
                overflow: document.documentElement.scrollWidth > window.innerWidth,
                jsonDumps: [...document.querySelectorAll('pre')].filter(
                    (el) => /^\\s*[\\[{]/.test(el.textContent)).length,
                images: [...document.images].map(
                    (img) => ({alt: img.alt, ok: img.complete && img.naturalWidth > 0})),
                text: document.body.innerText,
            };
        }""")
    finally:
        page.close()


def assert_reads_at_a_glance(found: dict[str, Any]) -> None:
    assert found["badge"] == "thresholds met" and found["badgeInView"]
    labels = [figure["text"] for figure in found["figures"]]
    for label in (
        "scenario",
        "load",
        "duration",
        "requests",
        "throughput",
        "failures",
        "p50 · FLOW challenge round trip",
        "p99 · FLOW challenge round trip",
    ):
        assert any(text.endswith(label) for text in labels), (label, labels)
    assert all(figure["inView"] for figure in found["figures"]), found["figures"]
    assert not found["overflow"], "the page is wider than a 1,280 px window"
    assert found["jsonDumps"] == 0
    assert found["images"] and all(image["ok"] for image in found["images"]), found["images"]


def test_report_reads_at_a_glance(run_directory: Path, browser: Any) -> None:
    found = seen(browser, run_directory / "report.html")
    assert_reads_at_a_glance(found)
    assert "No failures." in found["text"]
    # The JWE row in the unit its size calls for: "456 µs" when under a millisecond (as on a
    # quiet machine), never "0.46 ms" or "0.00"; a busy machine may make it slower.
    p50 = json.loads((run_directory / "summary.json").read_text())["latency_us"][
        "JWE build_solution"
    ]["p50"]
    assert duration(p50) in found["text"] and duration(p50).endswith(" µs") == (p50 < 1000)


def test_compare_report_reads_the_same_way(
    run_directory: Path, browser: Any, tmp_path: Path
) -> None:
    assert main(["report", str(run_directory), "--compare", str(run_directory)]) == 0
    found = seen(browser, run_directory / "report.html")
    assert_reads_at_a_glance(found)
    assert "Compared with" in found["text"] and "(+0.0%)" in found["text"]
