"""How an AuthZEN decision shows in a notebook: a card with the decision as a badge, the
action and resource asked about, and the PDP's ``context`` (secret-named members masked).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authzkit.wire.html import Html, badge, card, code, key_values, pre, pretty
from authzkit.wire.redact import mask_mapping


def decision_html(outcome: Any) -> Html:
    """The card of an AuthZEN :class:`Authorized` or :class:`Denied`."""
    asked = outcome.asked
    context = outcome.context if isinstance(outcome.context, Mapping) else {}
    rows = [
        ("action", code(outcome.action)),
        ("resource", f"{asked.resource_id} ({asked.resource_type})" if asked else None),
        ("dialect", "authzen"),
        ("context", pre(pretty(mask_mapping(dict(context)))) if context else "none"),
    ]
    tone = "ok" if outcome.authorized else "warn"
    return card(badge(outcome.status, tone), key_values(rows), tone=tone)


__all__ = ["decision_html"]
