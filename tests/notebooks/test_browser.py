"""A person's view of notebook 04: Voila serves it, Chromium types the PIN and clicks Submit.

Auto-submit is switched off (``AUTHZKIT_AUTO_SUBMIT=0``) so the form waits for the click, as
it does for a person. Needs Debian's ``chromium``; skips with the reason when it is absent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.wire.children import free_port

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "04_challenge.ipynb"
SERVER_START_SECONDS = 60
PAGE_SECONDS = 120  # Voila runs every cell (sandbox start, RSA key) before the form shows
OUTCOME_SECONDS = 30


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"voila exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "api", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers: serving
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"voila did not serve {url} within {SERVER_START_SECONDS} s:\n"
                f"{log.read_text()[-3000:]}")


@pytest.fixture
def voila_url(tmp_path: Path) -> Iterator[str]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium "
                    "(apt-get install chromium) to run the browser test")
    for module in ("voila", "playwright"):
        pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[dev]')")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    env["AUTHZKIT_AUTO_SUBMIT"] = "0"  # the form must wait for the click
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    log = tmp_path / "voila.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "voila", str(NOTEBOOK), "--no-browser", f"--port={port}",
             "--Voila.ip=127.0.0.1", "--show_tracebacks=True"],
            cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_until_serving(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _alice_pin() -> str:
    from authzkit.sandbox.world import World

    return World.default().subjects["alice"].credentials["pin"]


def test_typing_the_pin_and_clicking_submit_shows_authorized(voila_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    authorized = re.compile(r"\bauthorized\b")  # not "unauthorized"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), timeout=60_000,
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking"])
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
