"""Sphinx configuration of the authzkit site: MyST pages, the notebooks with their committed
outputs (never executed here), flow pages recorded from a live sandbox at build time, and the
OpenAPI documents rendered offline. ``bash .ci/docs`` builds it; see docs/development.md."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# myst-nb reads the notebooks with nbformat, whose jsonschema builds rfc3987-syntax's 38 Lark
# grammars at import (2 s of the build) for "iri" format checks a notebook never needs.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

project = "authzkit"
author = "authzkit contributors"
copyright = "authzkit contributors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "authzkit_docs",
]

exclude_patterns = ["_build", "README.md", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]
html_static_path = ["_static", "_generated/static"]
html_css_files = ["authzkit.css"]
html_theme = "furo"
html_title = "authzkit"
html_permalinks_icon = "#"
# Redoc takes the whole window on the two OpenAPI pages: they are not MyST pages.
html_additional_pages = {
    "api/openapi-draft": "redoc.html",
    "api/openapi-published": "redoc.html",
}

nitpicky = True
nitpick_ignore_regex = [
    # Standard-library and third-party types named in signatures: no intersphinx offline.
    (r"py:.*", r"(requests|jwcrypto|typing|collections|pathlib|datetime|http|os|_io|io|enum|"
               r"threading|contextlib|types|starlette|concurrent|ssl)\..*"),
    (r"py:.*", r"(Any|Callable|Mapping|Iterator|Iterable|Sequence|Self|Path|Literal|TypeVar)"),
    # Internal types named in the documented signatures (Secret, Settings, World, ...): the
    # reference documents the public names of ``authzkit`` only, not every module behind them.
    (r"py:.*", r"authzkit\..*"),
    (r"py:class", r"[A-Z][A-Za-z]+"),
]

myst_heading_anchors = 4
myst_fence_as_directive = ["mermaid"]
myst_enable_extensions = ["colon_fence", "deflist"]

# The notebooks are shown with the outputs they are committed with (nbval checks those).
nb_execution_mode = "off"
# No widget JavaScript from a CDN: widget views are dropped, their text/html fallback shows.
nb_ipywidgets_js = {}
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
