"""An AuthZEN world: the entities a PDP knows (subjects, resources, actions, each with
``type``/``id`` or ``name`` and ``properties``) and the rules it decides by (see
:mod:`authzkit.sandbox.authzen.policy`). Read from JSON once and checked whole, so a bad
``--world`` file fails with one line naming the entry; two ship with the package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources as _package_files
from pathlib import Path
from typing import Any

from authzkit.sandbox.authzen.policy import Rule, read_rule
from authzkit.wire.errors import ConfigError

# The worlds shipped with the package, by the name ``--world`` takes.
PACKAGED_WORLDS = ("certification", "todo")
DEFAULT_WORLD = "certification"
DEFAULT_PAGE_SIZE = 10


class AuthzenWorldError(ConfigError):
    """The file or mapping is not a valid AuthZEN world; the message names the entry."""


@dataclass(frozen=True)
class Entity:
    """A subject or resource the PDP knows (its attributes, as a PIP would give them)."""

    type: str
    id: str
    properties: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"type": self.type, "id": self.id}
        if self.properties:
            found["properties"] = dict(self.properties)
        return found


@dataclass(frozen=True)
class AuthzenWorld:
    """Entities in the order a search returns them, the rules in the order they apply."""

    subjects: tuple[Entity, ...]
    resources: tuple[Entity, ...]
    actions: tuple[str, ...]
    rules: tuple[Rule, ...]
    origin: Mapping[str, Any] = field(default_factory=dict)
    page_size: int = DEFAULT_PAGE_SIZE
    _index: dict[tuple[str, str, str], Entity] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for kind, entities in (("subject", self.subjects), ("resource", self.resources)):
            for entity in entities:
                self._index[(kind, entity.type, entity.id)] = entity

    def known(self, kind: str, type_: str, id_: str) -> Entity | None:
        """The world's ``kind`` (``subject``/``resource``) of that type and id, if any."""
        return self._index.get((kind, type_, id_))

    def to_json(self) -> dict[str, Any]:
        """The world as its file writes it (what ``GET /sandbox/v1/world`` shows)."""
        return {
            "origin": dict(self.origin),
            "page_size": self.page_size,
            "subjects": [s.to_json() for s in self.subjects],
            "resources": [r.to_json() for r in self.resources],
            "actions": [{"name": name} for name in self.actions],
            "rules": [rule.to_json() for rule in self.rules],
        }

    def __repr__(self) -> str:
        return (
            f"AuthzenWorld({len(self.subjects)} subjects, {len(self.resources)} resources, "
            f"{len(self.actions)} actions, {len(self.rules)} rules)"
        )

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_json(cls, data: Any, *, source: str = "world") -> AuthzenWorld:
        """A world from its JSON shape; :class:`AuthzenWorldError` names a bad entry."""

        def fail(where: str, problem: str) -> AuthzenWorldError:
            return AuthzenWorldError(f"{source}: {where}: {problem}")

        if not isinstance(data, Mapping):
            raise fail("top level", "expected a JSON object")
        subjects = _entities(data, "subjects", fail)
        resources = _entities(data, "resources", fail)
        actions = []
        for n, entry in enumerate(_list(data, "actions", fail)):
            name = entry.get("name") if isinstance(entry, Mapping) else None
            if not isinstance(name, str) or not name:
                raise fail(f"actions[{n}].name", "expected a non-empty string")
            actions.append(name)
        rules = []
        for n, entry in enumerate(_list(data, "rules", fail)):
            try:
                rules.append(read_rule(entry))
            except ValueError as exc:
                raise fail(f"rules[{n}]", str(exc)) from None
        origin = data.get("origin", {})
        if not isinstance(origin, Mapping):
            raise fail("origin", "expected an object")
        page_size = data.get("page_size", DEFAULT_PAGE_SIZE)
        if not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1:
            raise fail("page_size", "expected a whole number >= 1")
        return cls(
            tuple(subjects), tuple(resources), tuple(actions), tuple(rules), origin, page_size
        )

    @classmethod
    def load(cls, path: str | Path) -> AuthzenWorld:
        """A world file (JSON)."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise AuthzenWorldError(f"{path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise AuthzenWorldError(f"{path}: not JSON ({exc})") from None
        return cls.from_json(data, source=str(path))

    @classmethod
    def packaged(cls, name: str) -> AuthzenWorld:
        """One of :data:`PACKAGED_WORLDS`."""
        if name not in PACKAGED_WORLDS:
            raise AuthzenWorldError(
                f"no packaged AuthZEN world {name!r} (one of {', '.join(PACKAGED_WORLDS)})"
            )
        text = _package_files.files(__package__).joinpath(f"worlds/{name}.json").read_text()
        return cls.from_json(json.loads(text), source=f"packaged world {name!r}")

    @classmethod
    def coerce(cls, world: AuthzenWorld | str | Path | Mapping[str, Any] | None) -> AuthzenWorld:
        """A world from what ``Sandbox(world=...)`` accepts: a world, a packaged world's
        name, a file path, a mapping, or None (the certification fixture)."""
        if isinstance(world, AuthzenWorld):
            return world
        if world is None:
            return cls.packaged(DEFAULT_WORLD)
        if isinstance(world, Mapping):
            return cls.from_json(world)
        if isinstance(world, str) and world in PACKAGED_WORLDS:
            return cls.packaged(world)
        return cls.load(world)


def _list(data: Mapping[str, Any], key: str, fail: Any) -> list[Any]:
    found = data.get(key, [])
    if not isinstance(found, list):
        raise fail(key, "expected a list")
    return found


def _entities(data: Mapping[str, Any], key: str, fail: Any) -> list[Entity]:
    found, seen = [], set()
    for n, entry in enumerate(_list(data, key, fail)):
        where = f"{key}[{n}]"
        if not isinstance(entry, Mapping):
            raise fail(where, "expected an object")
        for name in ("type", "id"):
            if not isinstance(entry.get(name), str) or not entry[name]:
                raise fail(f"{where}.{name}", "expected a non-empty string")
        properties = entry.get("properties", {})
        if not isinstance(properties, Mapping):
            raise fail(f"{where}.properties", "expected an object")
        if (entry["type"], entry["id"]) in seen:
            raise fail(where, f"{entry['type']} {entry['id']!r} appears twice")
        seen.add((entry["type"], entry["id"]))
        found.append(Entity(entry["type"], entry["id"], dict(properties)))
    return found


__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_WORLD",
    "PACKAGED_WORLDS",
    "AuthzenWorld",
    "AuthzenWorldError",
    "Entity",
]
