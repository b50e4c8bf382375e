"""How a token provider shows in a notebook: the state of its access token (masked by
:func:`~authzkit.wire.redact.mask`), when it expires and is refreshed, and how many calls
to the token endpoint it made so far.

The token provider imports this module when it is first shown, so it is taken as ``Any``.
"""

from __future__ import annotations

from typing import Any

from authzkit.wire.html import Html, badge, card, code, join, key_values
from authzkit.wire.redact import mask


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if abs(value) >= 10 else f"{value:.1f} s"


def token_state(token: Any, now: float) -> tuple[str, str]:
    """``(state, tone)``: no token yet, fresh, due for a refresh, or expired."""
    if token is None:
        return "no token yet", "neutral"
    if now >= token.expires_at:
        return "expired", "bad"
    if now >= token.refresh_at:
        return "due for a refresh", "warn"
    return "fresh", "ok"


def provider_html(provider: Any, now: float) -> Html:
    """The card of a :class:`~authzkit.client.token.TokenProvider` at the time ``now``."""
    token = provider.current
    state, tone = token_state(token, now)
    rows: list[tuple[str, Any]] = [
        ("token endpoint", code(provider.token_url or provider.endpoint.discovery_url or "")),
        ("client", code(provider.client_id)),
        ("client authentication", provider.client_auth),
    ]
    if token is not None:
        left = token.expires_at - now
        rows += [
            ("access token", code(mask(token.value))),
            ("type", token.token_type),
            (
                "expires",
                f"in {_seconds(left)}" if left > 0 else f"{_seconds(-left)} ago",
            ),
            ("lifetime", _seconds(float(token.lifetime))),
            ("refreshed after", _seconds(token.refresh_at - token.issued_at)),
            ("issued token no.", token.serial),
        ]
    rows += [("token calls so far", provider.token_calls), ("refreshes", provider.refreshes)]
    title = join(badge("access token", "info"), " ", badge(state, tone))
    return card(title, key_values(rows), tone=tone)


__all__ = ["provider_html", "token_state"]
