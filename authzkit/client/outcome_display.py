"""How an outcome shows in a notebook: a small card with the decision as a badge, then the
action, the resource (as the client asked, or as the answer names it), the request id, the
shape and the dialect the body reads as, the challenge's kinds and the optional actions.

The values come from the service's answer; any secret-named member of what is shown
(``response``, ``details``, optional actions) is masked by
:func:`~authzkit.wire.redact.mask_mapping` first, like a recorded response body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authzkit.wire.html import Html, badge, card, code, join, key_values, pre, pretty
from authzkit.wire.redact import mask_mapping

# The outcomes import this module (when first shown), so it takes them as ``Any`` rather
# than import them back.
_NIL = "nil"  # the published dialect's null (authzkit.client.outcomes.NIL)


def _action(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    action = raw.get("action")
    return action if isinstance(action, Mapping) else {}


def authorized_dialect(raw: Mapping[str, Any]) -> str | None:
    """``published`` (a UUID id, ``response: "nil"``), ``draft`` (an integer id) or
    ``None`` when the body cannot tell (the shape after a solved challenge)."""
    identifier = raw.get("id")
    if isinstance(identifier, str) or _action(raw).get("response") == _NIL:
        return "published"
    return "draft" if isinstance(identifier, int) and not isinstance(identifier, bool) else None


def challenge_dialect(raw: Mapping[str, Any]) -> str:
    """``published`` (``id`` or ``details`` beside ``challenge``), else ``draft``."""
    return "published" if "id" in raw or "details" in raw else "draft"


def resource_of(raw: Mapping[str, Any], asked: Any = None) -> str | None:
    """The resource asked about (:class:`~authzkit.client.outcomes.Asked`), else the one
    the answer names, if it names one (the draft's answers do not)."""
    if asked is not None:
        return f"{asked.resource_id} ({asked.resource_type})"
    context = _action(raw).get("context")
    for where in (raw, context if isinstance(context, Mapping) else {}):
        resource_id = where.get("resource_id")
        if isinstance(resource_id, str | int) and not isinstance(resource_id, bool):
            kind = where.get("resource_type")
            return f"{resource_id} ({kind})" if isinstance(kind, str) else str(resource_id)
    return None


def _asked_action(outcome: Any, raw: Mapping[str, Any]) -> str | None:
    """The action a challenge stands in the way of: as asked, else as the body names it."""
    if outcome.asked is not None:
        return str(outcome.asked.action)
    name = _action(raw).get("name")
    return name if isinstance(name, str) else None


def _json(value: Any) -> Html | None:
    if value is None or value == [] or value == {}:
        return None
    return pre(pretty(mask_mapping(value)))


def _optional(optional: Any) -> Html | None:
    if isinstance(optional, list) and all(isinstance(o, str) for o in optional) and optional:
        return join(*(code(o) for o in optional), sep=", ")
    return _json(optional)


def authorized_html(outcome: Any) -> Html:
    """The card of an :class:`~authzkit.client.outcomes.Authorized`."""
    raw = outcome.raw if isinstance(outcome.raw, Mapping) else {}
    tone = "ok" if outcome.authorized else "warn"
    shape = "A (a plain success)" if outcome.shape == "A" else "B (after a solved challenge)"
    rows = [
        ("action", code(outcome.action)),
        ("resource", resource_of(raw, outcome.asked)),
        ("request id", code(outcome.id) if outcome.id is not None else None),
        ("shape", shape),
        ("dialect", authorized_dialect(raw)),
        ("response", _json(outcome.response)),
        ("optional actions", _optional(outcome.optional_actions) or "none"),
    ]
    title = join(badge(outcome.status, tone), " ", badge("HTTP 200"))
    return card(title, key_values(rows), tone=tone)


def challenge_html(outcome: Any) -> Html:
    """The card of a :class:`~authzkit.client.outcomes.ChallengeRequired`."""
    raw = outcome.raw if isinstance(outcome.raw, Mapping) else {}
    kinds = join(*(badge(kind, "info") for kind in outcome.required_types)) or Html("none")
    action = _asked_action(outcome, raw)
    rows = [
        ("action", code(action) if action is not None else None),
        ("resource", resource_of(raw, outcome.asked)),
        ("challenge id", code(outcome.challenge_id)),
        ("answer with one of", kinds),
        ("type", code(outcome.type)),
        ("dialect", challenge_dialect(raw)),
        ("details", _json(dict(outcome.details))),
        (
            "what to do next",
            "Send the subject's credential of one of these kinds, encrypted for the "
            "published key (authorize_with_challenge, or send_solution); a challenge is "
            "single-use.",
        ),
    ]
    title = join(badge("challenge required", "warn"), " ", badge("HTTP 403"))
    return card(title, key_values(rows), tone="warn")


__all__ = [
    "authorized_dialect",
    "authorized_html",
    "challenge_dialect",
    "challenge_html",
    "resource_of",
]
