"""The documentation site as a reader gets it: ``bash .ci/docs`` builds it (warnings are
errors, broken links and anchors fail), then Debian's Chromium opens every page from
127.0.0.1 with every other host unresolvable.

Each page must load without a single request to another host (no CDN: Mermaid, Redoc and the
notebooks' widget fallbacks are all local), every flow page's sequence diagram must be drawn
(the ``pre.mermaid`` holds an svg), the OpenAPI pages must list their endpoints, and no page may
scroll sideways at 1,280 px. Skips with the reason when chromium, Playwright or npm is absent.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from authzkit.shared.flows import FLOWS

from support.extras import held_env
from support.leaks import shows

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "docs" / "_build" / "html"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
DRAFT_ENDPOINTS = (
    "/api/v3.1/oauth/tokens",
    "/api/v1/discovery/keys",
    "/resources/v1/authorization/actions/authorize",
)
PUBLISHED_ENDPOINTS = (
    "/protocol/openid-connect/token",
    "/api/v1/discovery/keys",
    "/resources/v1/authorization/actions/authorize",
)
BUILD_SECONDS = 300


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium (apt-get install "
            "chromium) to check the documentation site"
        )
    pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    if not (REPO / "node_modules").is_dir() and shutil.which("npm") is None:
        pytest.skip(
            "npm is absent and node_modules/ missing: the site needs Mermaid and Redoc "
            "(npm ci, as .ci/run does)"
        )
    # Built as in a venv holding the [docs] extra alone (docs/development.md's line).
    held = held_env("docs", tmp_path_factory.mktemp("docs-extra"))
    built = subprocess.run(
        ["bash", str(REPO / ".ci" / "docs")],
        cwd=REPO,
        env={**os.environ, **held},
        text=True,
        capture_output=True,
        timeout=BUILD_SECONDS,
        check=False,
    )
    assert built.returncode == 0, f"bash .ci/docs failed:\n{built.stdout}\n{built.stderr}"
    return SITE


@pytest.fixture(scope="module")
def site_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser_page(site_url: str) -> Iterator[tuple[object, list[str]]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            yield page, requests
        finally:
            browser.close()


def _pages(site: Path) -> list[str]:
    return sorted(
        str(path.relative_to(site))
        for path in site.rglob("*.html")
        if "_static" not in path.parts and "_sources" not in path.parts
    )


def _foreign(requests: list[str], site_url: str) -> list[str]:
    local = urlsplit(site_url).netloc
    return [
        url
        for url in requests
        if urlsplit(url).scheme not in ("data", "blob", "about") and urlsplit(url).netloc != local
    ]


def test_the_site_has_every_kind_of_page(site: Path) -> None:
    pages = _pages(site)
    for expected in (
        "index.html",
        "wire-format.html",
        "dialects.html",
        "client.html",
        "sandbox.html",
        "loadtest.html",
        "check.html",
        "real-environment.html",
        "provider.html",
        "development.html",
        "testing.html",
        "api/python.html",
        "api/openapi-draft.html",
        "api/openapi-published.html",
        "notebooks/04_challenge.html",
        "flows/draft/challenge.html",
        "flows/published/challenge.html",
    ):
        assert expected in pages


def test_every_flow_has_a_page_on_both_dialects_with_secrets_masked(site: Path) -> None:
    demo_secrets = [
        "sandbox-demo-secret",
        "sandbox-frontend-secret",
        "alice-password",
        "bob-password",
        "1234",
        "4321",
        "MF2XI2D2NNUXILLBNRUWGZJNORXXI4BR",
        "MF2XI2D2NNUXILLCN5RC25DPORYC22ZS",
    ]
    for dialect in ("draft", "published"):
        for flow in FLOWS:  # the authorize API's (the AuthZEN flows: docs/authzen.md)
            page = site / "flows" / dialect / f"{flow}.html"
            assert page.is_file(), f"no page for `authzkit trace {flow} --dialect {dialect}`"
            source = (REPO / "docs" / "flows" / dialect / f"{flow}.md").read_text("utf-8")
            assert "```mermaid" in source and "curl " in source
            leaked = [secret for secret in demo_secrets if shows(secret, source)]
            assert not leaked, f"flows/{dialect}/{flow} shows {leaked}"


def test_every_page_loads_locally_draws_its_diagrams_and_fits_1280px(
    site: Path, site_url: str, browser_page: tuple[object, list[str]]
) -> None:
    page, requests = browser_page
    problems: list[str] = []
    flow_pages = 0
    for name in _pages(site):
        requests.clear()
        page.goto(site_url + name, wait_until="load")  # type: ignore[attr-defined]
        if name.startswith("flows/") and not name.endswith("index.html"):
            flow_pages += 1
            page.wait_for_function(  # type: ignore[attr-defined]
                "() => { const d = [...document.querySelectorAll('pre.mermaid')];"
                " return d.length > 0 && d.every(p => p.querySelector('svg')); }",
                timeout=30_000,
            )
        if name.startswith("api/openapi-"):
            page.wait_for_selector("#redoc .api-content", timeout=30_000)  # type: ignore[attr-defined]
        # A diagram or the API reference keeps loading after `load`: wait until the network
        # rests. Any other page has asked for everything it will ask for by `load`.
        if page.evaluate("() => !!document.querySelector('pre.mermaid, #redoc')"):  # type: ignore[attr-defined]
            page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
        foreign = _foreign(requests, site_url)
        if foreign:
            problems.append(f"{name} asked another host: {foreign}")
        overflow = page.evaluate(  # type: ignore[attr-defined]
            "() => document.documentElement.scrollWidth - window.innerWidth"
        )
        if overflow > 0:
            problems.append(f"{name} scrolls sideways by {overflow} px at 1280 px")
    assert not problems, "\n".join(problems)
    assert flow_pages >= 2 * 3, "every flow on both dialects has a page"


@pytest.mark.parametrize(
    ("dialect", "endpoints"), [("draft", DRAFT_ENDPOINTS), ("published", PUBLISHED_ENDPOINTS)]
)
def test_the_openapi_page_lists_the_endpoints_with_curl_samples(
    dialect: str, endpoints: tuple[str, ...], site_url: str, browser_page: tuple[object, list[str]]
) -> None:
    page, _ = browser_page
    page.goto(f"{site_url}api/openapi-{dialect}.html")  # type: ignore[attr-defined]
    page.wait_for_selector("#redoc .api-content", timeout=30_000)  # type: ignore[attr-defined]
    text = page.inner_text("#redoc")  # type: ignore[attr-defined]
    for endpoint in endpoints:
        assert endpoint in text, f"the {dialect} OpenAPI page does not list {endpoint}"
    assert "curl" in page.content()  # type: ignore[attr-defined]


def test_notebook_pages_show_widget_fallbacks_without_widget_scripts(
    site_url: str, browser_page: tuple[object, list[str]]
) -> None:
    page, _ = browser_page
    page.goto(f"{site_url}notebooks/04_challenge.html")  # type: ignore[attr-defined]
    html = page.content()  # type: ignore[attr-defined]
    assert "widget-view+json" not in html and "require.min.js" not in html
    assert page.locator(".cell_output").count() > 0  # type: ignore[attr-defined]
