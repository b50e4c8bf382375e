"""How a recorded exchange shows in a notebook: request and response side by side, the
status, the time and the curl command; a recorder as one line per exchange.

Exchanges arrive already masked by the recorder (docs/internals.md, "Exchanges in a
notebook").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from authzkit.wire.html import (
    Html,
    badge,
    card,
    code,
    columns,
    details,
    heading,
    join,
    key_values,
    pre,
    pretty,
    table,
)

SHOWN_EXCHANGES = 50  # a recorder shows its newest exchanges, up to this many


def status_badge(status: int, error: str | None = None) -> Html:
    """``200`` tinted green, a 4xx amber, a 5xx red; ``no answer`` when none came."""
    if not status:
        return badge("no answer", "bad")
    tone = "ok" if status < 300 else "warn" if status < 500 else "bad"
    return badge(f"HTTP {status}", tone)


def _side(title: str, headers: Mapping[str, str], body: Any) -> Html:
    parts: list[Any] = [heading(title), key_values(sorted(headers.items()))]
    if body is not None:
        parts.append(pre(pretty(body)))
    return join(*parts)


def exchange_html(exchange: Any) -> Html:
    """The card of one (masked) exchange."""
    title = join(
        status_badge(exchange.status),
        " ",
        code(exchange.name),
        " ",
        code(f"{exchange.method} {exchange.url}"),
        f" — {exchange.elapsed_ms:.1f} ms",
    )
    parts: list[Any] = []
    if exchange.error:
        parts.append(key_values([("no answer", exchange.error)]))
    parts.append(
        columns(
            _side("Request", exchange.request_headers, exchange.request_body),
            _side("Response", exchange.response_headers, exchange.response_body)
            if exchange.status
            else heading("No response"),
        )
    )
    parts += [heading("curl (export the $VARIABLES it names first)"), pre(exchange.curl())]
    tone = "bad" if not exchange.status or exchange.status >= 500 else "neutral"
    return card(title, *parts, tone=tone)


def recorder_html(exchanges: Sequence[Any]) -> Html:
    """A recorder's (masked) exchanges: a table of the newest, then each one's card."""
    shown = list(exchanges)[-SHOWN_EXCHANGES:]
    first = len(exchanges) - len(shown) + 1
    rows = [
        (
            number,
            code(e.name),
            e.method,
            urlsplit(e.url).path,
            status_badge(e.status),
            f"{e.elapsed_ms:.1f} ms",
        )
        for number, e in enumerate(shown, start=first)
    ]
    count = len(exchanges)
    title = join(badge(f"{count} exchange{'s' if count != 1 else ''}", "info"), " recorded")
    if len(shown) < count:
        title = join(title, f" (the newest {len(shown)} shown)")
    folds = [
        details(join(f"{n}. ", code(e.name), " ", status_badge(e.status)), exchange_html(e))
        for n, e in enumerate(shown, start=first)
    ]
    body = [table(("#", "name", "method", "path", "status", "time"), rows), *folds]
    return card(title, *(body if shown else ["Nothing recorded yet."]))


__all__ = ["SHOWN_EXCHANGES", "exchange_html", "recorder_html", "status_badge"]
