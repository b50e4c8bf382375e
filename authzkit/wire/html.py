"""The few HTML pieces every rich display in a notebook is made of: escaping, a badge, a
key/value table, a table, a code block, a card.

Self-contained (inline styles, no script), readable in light and dark themes, every value
escaped; values arrive already masked (docs/internals.md, "HTML pieces").
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

# Tone -> translucent tint (background) and its opaque edge; text keeps the theme's colour.
TONES: dict[str, tuple[str, str]] = {
    "ok": ("rgba(46,160,67,.18)", "rgba(46,160,67,.75)"),
    "warn": ("rgba(210,153,34,.2)", "rgba(210,153,34,.8)"),
    "bad": ("rgba(218,54,51,.18)", "rgba(218,54,51,.75)"),
    "info": ("rgba(56,139,253,.16)", "rgba(56,139,253,.75)"),
    "neutral": ("rgba(128,128,128,.14)", "rgba(128,128,128,.6)"),
}
_LINE = "1px solid rgba(128,128,128,.35)"
_MONO = "font-family:SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em"
_CELL = f"padding:2px 8px;border-bottom:{_LINE};text-align:left;vertical-align:top"


class Html(str):
    """A fragment of HTML already built from escaped values: never escaped again."""

    __slots__ = ()


def escape(value: Any) -> Html:
    """``value`` as HTML: an :class:`Html` fragment as it is, anything else its escaped
    ``str`` (``None`` reads as an empty string)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("" if value is None else str(value), quote=True))


def join(*parts: Any, sep: str = "") -> Html:
    """The parts, each escaped unless already :class:`Html`, one after the other."""
    return Html(escape(sep).join(escape(part) for part in parts))


def tone_of(tone: str) -> tuple[str, str]:
    return TONES.get(tone, TONES["neutral"])


def badge(text: Any, tone: str = "neutral") -> Html:
    """A small rounded label tinted by ``tone`` (``ok``, ``warn``, ``bad``, ``info``,
    ``neutral``)."""
    tint, edge = tone_of(tone)
    style = (
        f"display:inline-block;padding:0 7px;margin:1px 2px;border-radius:9px;"
        f"border:1px solid {edge};background:{tint};font-size:.85em;font-weight:600;"
        "line-height:1.5;white-space:nowrap"
    )
    return Html(f'<span style="{style}">{escape(text)}</span>')


def code(text: Any) -> Html:
    """Inline monospace text."""
    return Html(f'<code style="{_MONO}">{escape(text)}</code>')


def pre(text: Any) -> Html:
    """A block of monospace text, wrapped rather than scrolled."""
    style = (
        f"{_MONO};margin:2px 0;padding:6px 8px;border-radius:4px;"
        "background:rgba(128,128,128,.1);white-space:pre-wrap;overflow-wrap:anywhere"
    )
    return Html(f'<pre style="{style}">{escape(text)}</pre>')


def pretty(value: Any) -> str:
    """A JSON-like value as indented JSON (a string as it is; ``None`` as ``null``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def key_values(rows: Iterable[tuple[str, Any]]) -> Html:
    """A two-column table, key then value; a row whose value is ``None`` is left out."""
    body = "".join(
        f'<tr><th style="{_CELL};font-weight:600;white-space:nowrap;opacity:.8">'
        f'{escape(key)}</th><td style="{_CELL}">{escape(value)}</td></tr>'
        for key, value in rows
        if value is not None
    )
    return Html(f'<table style="border-collapse:collapse;margin:4px 0">{body}</table>')


def table(headers: Iterable[Any], rows: Iterable[Iterable[Any]]) -> Html:
    """A table with a header row; each cell escaped unless already :class:`Html`."""
    head = "".join(f'<th style="{_CELL};font-weight:600">{escape(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{escape(cell)}</td>' for cell in row) + "</tr>"
        for row in rows
    )
    return Html(
        f'<table style="border-collapse:collapse;margin:4px 0"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def details(summary: Any, *body: Any, open: bool = False) -> Html:
    """A fold: ``summary`` always shown, ``body`` on a click (no script needed)."""
    opened = " open" if open else ""
    return Html(
        f'<details{opened} style="margin:2px 0"><summary style="cursor:pointer">'
        f"{escape(summary)}</summary>{join(*body)}</details>"
    )


def columns(*parts: Any) -> Html:
    """Side by side when there is room, one under the other when there is not."""
    cells = "".join(
        f'<div style="flex:1 1 22em;min-width:0">{escape(part)}</div>' for part in parts
    )
    return Html(f'<div style="display:flex;flex-wrap:wrap;gap:12px">{cells}</div>')


def heading(text: Any) -> Html:
    return Html(f'<div style="font-weight:600;margin:6px 0 2px">{escape(text)}</div>')


def card(title: Any, *parts: Any, tone: str = "neutral", wide: bool = False) -> Html:
    """A bordered box: a title line (its edge tinted by ``tone``), then the parts; ``wide``
    for tables of many columns (a box is 60em at most otherwise); too wide, it scrolls."""
    edge = tone_of(tone)[1]
    style = (
        f"border:{_LINE};border-left:4px solid {edge};border-radius:6px;padding:6px 10px;"
        f"margin:4px 0;max-width:{'100%' if wide else '60em'};overflow-x:auto;"
        "color:inherit;line-height:1.45"
    )
    return Html(
        f'<div style="{style}"><div style="margin-bottom:4px">{escape(title)}</div>'
        f"{join(*parts)}</div>"
    )


__all__ = [
    "TONES",
    "Html",
    "badge",
    "card",
    "code",
    "columns",
    "details",
    "escape",
    "heading",
    "join",
    "key_values",
    "pre",
    "pretty",
    "table",
    "tone_of",
]
