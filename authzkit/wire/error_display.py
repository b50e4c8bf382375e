"""How an :class:`~authzkit.wire.errors.AuthzError` shows in a notebook: its class, HTTP
status, the service's ``type``, the field it concerns, the detail, and what to do next when
the error table knows the type.

The error table (:mod:`authzkit.wire.error_table`) imports the errors, so the errors cannot
import it back: the table hands its next steps to :func:`learn_next_steps` when it is
imported (every error raised from an answer went through it, so its next step is known).
The detail is the error's message, from which the client already scrubbed its secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from authzkit.wire.html import Html, badge, card, code, join, key_values

# service type -> what a client does about it (the error table's ``remedy`` column)
_NEXT_STEPS: dict[str, str] = {}


class ShownError(Protocol):
    """What the display reads of an error (an :class:`AuthzError`)."""

    message: str
    type: str | None
    status: int | None
    field: str | None


def learn_next_steps(steps: Mapping[str, str]) -> None:
    """Remember the error table's next step of each type."""
    _NEXT_STEPS.update(steps)


def next_step(type_: str | None) -> str | None:
    """What to do about an error of the service's ``type_``, when the table knows."""
    return _NEXT_STEPS.get(type_) if type_ else None


def _tone(status: int | None) -> str:
    if status is None or status >= 500:
        return "bad"
    return "warn" if status in (401, 403) else "bad"


def error_html(error: ShownError) -> Html:
    """A card: the class name and HTTP status as badges, then type, field, detail, next step."""
    name = type(error).__name__
    status = f"HTTP {error.status}" if error.status is not None else "no HTTP answer"
    title = join(badge(name, _tone(error.status)), " ", badge(status, "neutral"))
    rows = [
        ("type", code(error.type) if error.type else None),
        ("field", code(error.field) if error.field else None),
        ("detail", error.message),
        ("what to do next", next_step(error.type)),
    ]
    return card(title, key_values(rows), tone=_tone(error.status))


__all__ = ["ShownError", "error_html", "learn_next_steps", "next_step"]
