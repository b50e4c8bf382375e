"""The rules an AuthZEN world decides by: the first rule whose every condition holds gives
its effect (``permit`` or ``deny``), and no match denies. A condition names a place in the
request (``subject.id``, ``action.name``, ``resource.properties.status`` …) and wants a
value (equal, or contained when the place holds a list), ``{"any_of": [...]}``, or
``{"same_as": "<another place>"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EFFECTS = ("permit", "deny")
ROOTS = ("subject", "action", "resource", "context")
_MISSING = object()


@dataclass(frozen=True)
class Rule:
    """One rule: its effect, its conditions (place → wanted), an optional id and the
    ``context`` its decision carries."""

    effect: str
    when: Mapping[str, Any]
    id: str | None = None
    context: Mapping[str, Any] | None = field(default=None)

    def holds(self, request: Mapping[str, Any]) -> bool:
        """True when every condition holds for ``request`` (resolved entities)."""
        return all(_wanted(request, place, wanted) for place, wanted in self.when.items())

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"effect": self.effect, "when": dict(self.when)}
        if self.id is not None:
            found["id"] = self.id
        if self.context is not None:
            found["context"] = dict(self.context)
        return found


def read_rule(entry: Any) -> Rule:
    """A rule from its JSON; :class:`ValueError` says what is wrong with it."""
    if not isinstance(entry, Mapping):
        raise ValueError("expected an object")
    effect = entry.get("effect")
    if effect not in EFFECTS:
        raise ValueError(f"effect: expected one of {', '.join(EFFECTS)}")
    when = entry.get("when", {})
    if not isinstance(when, Mapping):
        raise ValueError("when: expected an object of place → wanted value")
    for place, wanted in when.items():
        _check_place(place)
        if isinstance(wanted, Mapping):
            if set(wanted) == {"any_of"} and isinstance(wanted["any_of"], list):
                continue
            if set(wanted) == {"same_as"} and isinstance(wanted["same_as"], str):
                _check_place(wanted["same_as"])
                continue
            raise ValueError(
                f"when.{place}: an object must be {{'any_of': [...]}} or {{'same_as': place}}"
            )
    id_ = entry.get("id")
    if id_ is not None and not isinstance(id_, str):
        raise ValueError("id: expected a string")
    context = entry.get("context")
    if context is not None and not isinstance(context, Mapping):
        raise ValueError("context: expected an object")
    return Rule(effect, dict(when), id_, context)


def decide(rules: tuple[Rule, ...], request: Mapping[str, Any]) -> Rule | None:
    """The first rule that holds for ``request`` (None: nothing matched, a deny)."""
    for rule in rules:
        if rule.holds(request):
            return rule
    return None


def _check_place(place: Any) -> None:
    parts = place.split(".") if isinstance(place, str) else []
    if not parts or parts[0] not in ROOTS or "" in parts:
        raise ValueError(
            f"when: {place!r} is not a place (subject.…, action.…, resource.…, context.…)"
        )


def _at(request: Mapping[str, Any], place: str) -> Any:
    found: Any = request
    for part in place.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return _MISSING
        found = found[part]
    return found


def _equal(found: Any, value: Any) -> bool:
    if found is _MISSING:
        return False
    if isinstance(found, list) and not isinstance(value, list):
        return any(_same(item, value) for item in found)
    return _same(found, value)


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1.
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _wanted(request: Mapping[str, Any], place: str, wanted: Any) -> bool:
    found = _at(request, place)
    if isinstance(wanted, Mapping) and "any_of" in wanted:
        return any(_equal(found, value) for value in wanted["any_of"])
    if isinstance(wanted, Mapping) and "same_as" in wanted:
        other = _at(request, wanted["same_as"])
        return other is not _MISSING and _equal(found, other)
    return _equal(found, wanted)


__all__ = ["EFFECTS", "ROOTS", "Rule", "decide", "read_rule"]
