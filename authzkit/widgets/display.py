"""How a widget of ours reads where no widget frontend is attached: a static copy beside the
live view (``text/plain`` for a terminal or nbval, ``text/html`` for an HTML export made
without saved widget state; docs/internals.md, "Without a widget frontend").
"""

from __future__ import annotations

import html
from typing import Any

FALLBACK_CLASS = "authzkit-static-copy"
STATIC_NOTE = (
    "A static copy of the widget as the notebook last ran; the live widget needs a "
    "running kernel (JupyterLab, Voila)."
)
_BOX = "border-left:3px solid #d0d7de;padding:2px 0 2px 10px;margin:4px 0"
_NOTE = "color:#57606a;font-size:.9em;margin:0 0 4px 0"
# An export's stylesheet draws a <pre> inside an HTML output in the text font: the body and
# curl of an exchange read as code only in a monospace one.
_PRE = (
    f"<style>.{FALLBACK_CLASS} pre{{font-family:ui-monospace,monospace;"
    "font-size:.88em;white-space:pre-wrap}</style>"
)


def static_copy(body: str) -> str:
    """``body`` (trusted HTML, already escaped) in a box that says it is a static copy."""
    return (
        f'<div class="{FALLBACK_CLASS}" style="{_BOX}">{_PRE}'
        f'<p style="{_NOTE}"><i>{html.escape(STATIC_NOTE)}</i></p>{body}</div>'
    )


class TextFallback:
    """Mixin: ``repr`` and the ``text/plain`` of the display bundle are ``summary()``, its
    ``text/html`` is :func:`static_copy` of ``summary_html()``; a frontend still renders
    ``widget``."""

    widget: Any

    def summary(self) -> str:
        raise NotImplementedError

    def summary_html(self) -> str:
        """The state as HTML (default: the summary, preformatted); subclasses show more."""
        return f"<pre>{html.escape(self.summary())}</pre>"

    def __repr__(self) -> str:
        return self.summary()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary()
        bundle["text/html"] = static_copy(self.summary_html())
        return bundle


__all__ = ["FALLBACK_CLASS", "STATIC_NOTE", "TextFallback", "static_copy"]
