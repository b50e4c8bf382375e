"""A person's view of notebook 04: Voila serves it, Chromium types the PIN and clicks Submit.

Auto-submit is switched off (``AUTHZKIT_AUTO_SUBMIT=0``) so the form waits for the click, as
it does for a person. Needs Debian's ``chromium``; skips with the reason when it is absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.voila import voila_serving

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "04_challenge.ipynb"
PAGE_SECONDS = 120  # Voila runs every cell (sandbox start, RSA key) before the form shows
OUTCOME_SECONDS = 30


@pytest.fixture
def voila_url(tmp_path: Path) -> Iterator[str]:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium "
            "(apt-get install chromium) to run the browser test"
        )
    for module in ("voila", "playwright"):
        pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[dev]')")
    auto_submit_off = {"AUTHZKIT_AUTO_SUBMIT": "0"}  # the form must wait for the click
    with voila_serving(
        NOTEBOOK, cwd=tmp_path, env=auto_submit_off, log=tmp_path / "voila.log"
    ) as url:
        yield url


def _alice_pin() -> str:
    from authzkit.sandbox.world import World

    return World.default().subjects["alice"].credentials["pin"]


def test_typing_the_pin_and_clicking_submit_shows_authorized(voila_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    authorized = re.compile(r"\bauthorized\b")  # not "unauthorized"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            timeout=60_000,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(PAGE_SECONDS * 1000)
            page.goto(voila_url, timeout=PAGE_SECONDS * 1000)
            form = page.locator(".authzkit-challenge-form").first
            pin = form.locator(".authzkit-answer-pin input")
            pin.wait_for(state="visible", timeout=PAGE_SECONDS * 1000)
            outcome = form.locator(".authzkit-outcome")
            assert not authorized.search(outcome.inner_text()), "submitted before the click"
            expect(pin).to_have_attribute("type", "password")

            pin.fill(_alice_pin())
            form.locator(".authzkit-submit").click()

            expect(outcome).to_contain_text(authorized, timeout=OUTCOME_SECONDS * 1000)
            expect(outcome).to_contain_text("answered with PIN (typed)")
            expect(outcome).to_contain_text('"alg": "RSA-OAEP-256"')
            expect(pin).to_have_value("")  # the answer does not stay in the widget
        finally:
            browser.close()
