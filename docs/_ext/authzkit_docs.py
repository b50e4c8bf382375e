"""What the authzkit site builds beyond plain MyST pages, each step at build time.

- Flow pages: ``authzkit trace FLOW --dialect D`` run against a fresh embedded sandbox for every
  flow of the authorize API (``authzkit.shared.flows.FLOWS``) on both its dialects, written to
  ``docs/flows/`` (not committed), so the pages cannot drift from the code. The trace's own
  Markdown carries the Mermaid sequence diagram, each request and response body (secrets
  masked) and the curl commands.
- The notebooks, copied from ``notebooks/`` to ``docs/notebooks/`` (not committed) and shown with
  their committed outputs.
- The two OpenAPI documents, with ``x-codeSamples`` taken from the flow pages' curl commands,
  rendered by Redoc's standalone bundle on ``api/openapi-draft.html`` and
  ``api/openapi-published.html``.
- Mermaid and Redoc come from ``node_modules/`` (``npm ci`` at the repository root) and are copied
  into the site's static files: no page loads anything from another host.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"
VENDOR = {
    "mermaid.min.js": ROOT / "node_modules" / "mermaid" / "dist" / "mermaid.min.js",
    "redoc.standalone.js": ROOT / "node_modules" / "redoc" / "bundles" / "redoc.standalone.js",
}
DIALECTS = ("draft", "published")
OPENAPI = {"draft": ROOT / "authzkit" / "openapi.json",
           "published": ROOT / "authzkit" / "published.openapi.json"}
EXCHANGE = re.compile(r"^### \d+\. `[^`]+`: (?P<method>[A-Z]+) (?P<path>\S+) → (?P<status>\d+)")
ISSUER_PATH = "/auth/realms/authzkit"  # the published sandbox's issuer, below its address
SANDBOX_URL = re.compile(r"'http://127\.0\.0\.1:\d+(?P<path>[^']*)'")
logger = logging.getLogger(__name__)


class MermaidDirective(Directive):
    """A ```` ```mermaid ```` fence, drawn in the browser by the local copy of Mermaid."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        source = html.escape("\n".join(self.content))
        return [nodes.raw("", f'<pre class="mermaid">\n{source}\n</pre>\n', format="html")]


def _authzkit(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI, always on its own embedded sandbox: no ``AUTHZKIT_*`` variable and no ``.env``
    (run from an empty folder) may point a docs build at a real environment. ``args`` are
    the command's, or ``-c SCRIPT ARGS`` for a script calling it."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("AUTHZKIT_")}
    command = list(args) if args[0] == "-c" else ["-m", "authzkit", *args]
    with tempfile.TemporaryDirectory() as empty:
        return subprocess.run([sys.executable, *command], cwd=empty, text=True,
                              env=environment, capture_output=True, timeout=300, check=False)


def trace_flows() -> list[str]:
    """The flows ``authzkit trace`` runs on the draft and published dialects, from their one
    definition (``authzkit.shared.flows.FLOWS``; the AuthZEN flows are docs/authzen.md's)."""
    listed = _authzkit("-c", "from authzkit.shared.flows import FLOWS; print(','.join(FLOWS))")
    if listed.returncode or not re.fullmatch(r"[a-z_,]+", listed.stdout.strip()):
        raise ExtensionError(f"cannot read the flows of `authzkit trace`:\n"
                             f"{listed.stdout}{listed.stderr}")
    return listed.stdout.strip().split(",")


# `authzkit trace FLOW` for each flow in turn, in ONE process per dialect: each flow still
# runs on a fresh embedded sandbox (the command starts one per call), without paying a
# Python start and authzkit's imports twenty times over.
TRACE_EACH = """
import sys
from authzkit.cli.main import main
dialect, folder, *flows = sys.argv[1:]
for flow in flows:
    out = f"{folder}/{flow}.md"
    if main(["trace", flow, "--dialect", dialect, "--key-size", "2048", "--out", out]):
        sys.exit(f"authzkit trace {flow} --dialect {dialect} failed")
"""


def _record(dialect: str, flows: list[str]) -> None:
    folder = DOCS / "flows" / dialect
    done = _authzkit("-c", TRACE_EACH, dialect, str(folder), *flows)
    if done.returncode:
        raise ExtensionError(f"recording the {dialect} flows failed:\n"
                             f"{done.stdout}{done.stderr}")
    for flow in flows:
        out = folder / f"{flow}.md"
        text = out.read_text(encoding="utf-8")
        title = f"# `{flow}` on the {dialect} dialect"
        text = re.sub(r"\A# .*", lambda _, title=title: title, text, count=1)
        out.write_text(text, encoding="utf-8")


def record_flows() -> list[str]:
    """Every flow on both dialects, a process per dialect; returns the flow names."""
    shutil.rmtree(DOCS / "flows", ignore_errors=True)
    for dialect in DIALECTS:
        (DOCS / "flows" / dialect).mkdir(parents=True)
    flows = trace_flows()
    with ThreadPoolExecutor(max_workers=len(DIALECTS)) as pool:
        list(pool.map(lambda dialect: _record(dialect, flows), DIALECTS))
    _write_flow_indexes(flows)
    return flows


def _write_flow_indexes(flows: list[str]) -> None:
    for dialect in DIALECTS:
        entries = "\n".join(flows)
        (DOCS / "flows" / dialect / "index.md").write_text(
            f"# Flows on the {dialect} dialect\n\n"
            f"Each page was recorded while this site was built, against an embedded sandbox "
            f"speaking the {dialect} dialect (`authzkit trace FLOW --dialect {dialect}`).\n\n"
            f"```{{toctree}}\n:maxdepth: 1\n\n{entries}\n```\n", encoding="utf-8")


def curl_samples(dialect: str) -> dict[tuple[str, str], str]:
    """(method, path) → the first curl command the flow pages show for it, a 2xx preferred,
    with the sandbox's address replaced by the variable naming it on a real environment
    (``$AUTHZKIT_BASE_URL``, ``$AUTHZKIT_AUTH_URL`` or ``$AUTHZKIT_ISSUER``)."""
    best: dict[tuple[str, str], tuple[bool, str]] = {}
    for page in sorted((DOCS / "flows" / dialect).glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            exchange = EXCHANGE.match(line)
            if not exchange:
                continue
            key = (exchange["method"].lower(), exchange["path"])
            ok = exchange["status"].startswith("2")
            command = _next_sh_block(lines, number + 1)
            if command and (key not in best or (ok and not best[key][0])):
                best[key] = (ok, SANDBOX_URL.sub(_variable_address, command))
    return {key: command for key, (_, command) in best.items()}


def _variable_address(found: re.Match[str]) -> str:
    """The sandbox's address as the variable that names it on a real environment."""
    path = found["path"]
    if path.startswith(ISSUER_PATH):
        return f"\"$AUTHZKIT_ISSUER\"'{path.removeprefix(ISSUER_PATH)}'"
    variable = "AUTHZKIT_AUTH_URL" if path.startswith("/api/v3.1/oauth/") else "AUTHZKIT_BASE_URL"
    return f"\"${variable}\"'{path}'"


def _next_sh_block(lines: list[str], start: int) -> str | None:
    for number in range(start, len(lines)):
        if lines[number].startswith("### "):
            return None
        if lines[number] == "```sh":
            end = lines.index("```", number + 1)
            return "\n".join(lines[number + 1:end])
    return None


def openapi_with_samples(dialect: str) -> dict[str, Any]:
    document = json.loads(OPENAPI[dialect].read_text(encoding="utf-8"))
    samples = curl_samples(dialect)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            command = samples.get((method, path))
            if command:
                operation["x-codeSamples"] = [{"lang": "Shell", "label": "curl",
                                               "source": command}]
    return document


# Redoc's bundle draws its "by Redocly" logo from Redocly's CDN: the copy draws a blank one.
REDOC_LOGO = 'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"'
BLANK_SVG = 'src:"data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27/%3E"'


def _vendor() -> None:
    static = GENERATED / "static" / "vendor"
    static.mkdir(parents=True, exist_ok=True)
    for name, source in VENDOR.items():
        if not source.exists():
            raise ExtensionError(f"{source.relative_to(ROOT)} is missing: run `npm ci` at the "
                                 "repository root (bash .ci/docs does)")
        text = source.read_text(encoding="utf-8")
        if name.startswith("redoc"):
            if REDOC_LOGO not in text:
                raise ExtensionError("Redoc's bundle changed: check what it loads from its CDN")
            text = text.replace(REDOC_LOGO, BLANK_SVG)
        (static / name).write_text(text, encoding="utf-8")


def _copy_notebooks() -> None:
    target = DOCS / "notebooks"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copyfile(notebook, target / notebook.name)


def builder_inited(app: Sphinx) -> None:
    _vendor()
    _copy_notebooks()
    flows = record_flows()
    logger.info(f"authzkit: recorded {len(flows)} flows on {len(DIALECTS)} dialects")
    app.env.authzkit_openapi = {dialect: openapi_with_samples(dialect)  # type: ignore[attr-defined]
                                for dialect in DIALECTS}


def page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                 doctree: Any) -> None:
    if pagename.startswith("api/openapi-"):
        dialect = pagename.removeprefix("api/openapi-")
        document = app.env.authzkit_openapi[dialect]  # type: ignore[attr-defined]
        context["title"] = document["info"]["title"]
        context["openapi_json"] = json.dumps(document).replace("</", "<\\/")
        context["dialect"] = dialect
    elif doctree is not None and any('<pre class="mermaid">' in node.astext()
                                     for node in doctree.findall(nodes.raw)):
        app.add_js_file("vendor/mermaid.min.js")
        app.add_js_file("authzkit-mermaid.js")


def setup(app: Sphinx) -> dict[str, Any]:
    (GENERATED / "static").mkdir(parents=True, exist_ok=True)
    app.add_directive("mermaid", MermaidDirective)
    app.connect("builder-inited", builder_inited)
    app.connect("html-page-context", page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
