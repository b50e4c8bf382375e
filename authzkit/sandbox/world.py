"""The sandbox's world: who may call, who acts, on what, and which actions need a challenge.

A world is read once (TOML or JSON file, or a mapping) and validated completely before the
sandbox starts, so a broken ``--world`` file fails with one message naming the exact entry
(``clients[1].client_secret: expected a non-empty string``) instead of a 500 later.
"""

from __future__ import annotations

import base64
import binascii
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources as _package_files
from pathlib import Path
from typing import Any

from authzkit.sandbox.clients import CLIENT_KEY_SIZE, Client, read_client
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import CREDENTIAL_KINDS, RESOURCE_TYPE_PREFIX, SANDBOX_IDENTITY

DEFAULT_WORLD_FILE = "default_world.toml"


class WorldError(ConfigError):
    """The world file or mapping is not a valid sandbox world; the message names the entry."""


@dataclass(frozen=True)
class Subject:
    """A person or application acting; ``credentials`` maps a credential kind to its answer."""

    id: str
    credentials: Mapping[str, str] = field(repr=False)


@dataclass(frozen=True)
class Resource:
    """A thing an action acts upon; only its ``owner`` may act on it."""

    id: str
    type: str
    owner: str


@dataclass(frozen=True)
class Action:
    """An action name and the credential kinds that can solve its challenge (empty: none)."""

    name: str
    required_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class World:
    """The whole world, indexed for the lookups the authorize path makes on every call."""

    clients: Mapping[str, Client]
    subjects: Mapping[str, Subject]
    resources: Mapping[str, Resource]
    actions: Mapping[str, Action]

    def to_json(self) -> dict[str, Any]:
        """The world in the ``/sandbox/v1/world`` shape (demo secrets included: a sandbox)."""
        return {
            "clients": [client.to_json() for client in self.clients.values()],
            "subjects": [
                {"id": s.id, "credentials": dict(s.credentials)} for s in self.subjects.values()
            ],
            "resources": [
                {"id": r.id, "type": r.type, "owner": r.owner} for r in self.resources.values()
            ],
            "actions": [
                {"name": a.name, "required_types": list(a.required_types)}
                for a in self.actions.values()
            ],
        }

    # -- typed lookups (what the environment, the load test and the server ask) -------

    def subject(self, subject_id: str) -> Subject:
        """The subject called ``subject_id``; a :class:`WorldError` naming the known ones."""
        found = self.subjects.get(subject_id)
        if found is None:
            raise WorldError(
                f"no subject {subject_id!r} in the sandbox world "
                f"(known: {', '.join(self.subjects)})"
            )
        return found

    def owned_by(self, subject_id: str) -> list[Resource]:
        """The resources ``subject_id`` may act on, in world order."""
        return [r for r in self.resources.values() if r.owner == subject_id]

    def default_subject(self) -> str:
        """The subject commands, notebooks and tests act as when none is named: the first
        subject, in world order, that owns a resource (one that owns none could be asked
        about nothing). The one home of that rule, so a world of its own (``carol`` alone)
        serves as the packaged one (``alice``) does; every valid world has one, since each
        resource's owner is a subject."""
        owners = {r.owner for r in self.resources.values()}
        found = next((s for s in self.subjects if s in owners), None)
        if found is None:  # only a World built by hand, never one read and validated
            raise WorldError("the sandbox world has no subject that owns a resource")
        return found

    def foreign_to(self, subject_id: str) -> Resource | None:
        """A resource ``subject_id`` does not own (to provoke ``unauthorized``), if any."""
        return next((r for r in self.resources.values() if r.owner != subject_id), None)

    def with_generated_keys(self) -> World:
        """This world with a fresh key pair for each client that asks for one
        (``generate_key``): what a sandbox serves from its start."""
        if not any(c.generate_key and c.client_key_pem is None for c in self.clients.values()):
            return self
        clients = {cid: c.with_generated_key() for cid, c in self.clients.items()}
        return replace(self, clients=clients)

    def resource_server(self) -> Client:
        """The first client flagged ``resource_server`` (the demo client authzkit uses)."""
        found = next((c for c in self.clients.values() if c.resource_server), None)
        if found is None:
            raise WorldError("the world has no client with resource_server = true")
        return found

    def __repr__(self) -> str:
        return (
            f"World({len(self.clients)} clients, {len(self.subjects)} subjects, "
            f"{len(self.resources)} resources, {len(self.actions)} actions)"
        )

    @classmethod
    def from_json(cls, data: Any, *, source: str = "world") -> World:
        """Validate ``data`` (the world JSON shape) completely; a :class:`WorldError` if not."""
        return _Reader(source).world(data)

    @classmethod
    def load(cls, path: str | Path) -> World:
        """Read a ``.toml`` or ``.json`` world file (other suffixes: tried as TOML, then JSON)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise WorldError(f"world file {path}: no such file") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise WorldError(f"world file {path}: cannot read it: {exc}") from exc
        return cls.from_json(_parse(text, path), source=f"world file {path}")

    @classmethod
    def default(cls) -> World:
        """The packaged default world (fixed ids and demo credentials)."""
        text = (_package_files.files("authzkit.sandbox") / DEFAULT_WORLD_FILE).read_text("utf-8")
        return cls.from_json(tomllib.loads(text), source="default world")

    @classmethod
    def coerce(cls, world: World | str | Path | Mapping[str, Any] | None) -> World:
        """``None`` → default; a path → loaded; a mapping → validated; a World → itself."""
        if world is None:
            return cls.default()
        if isinstance(world, World):
            return world
        if isinstance(world, str | Path):
            return cls.load(world)
        if isinstance(world, Mapping):
            return cls.from_json(world)
        raise WorldError(
            f"a world is a World, a file path or a mapping, not {type(world).__name__}"
        )


def _parse(text: str, path: Path) -> Any:
    """TOML or JSON by suffix; the parser's own line/column message is kept."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise WorldError(f"world file {path}: not valid JSON: {exc}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if suffix == ".toml":
            raise WorldError(f"world file {path}: not valid TOML: {exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise WorldError(f"world file {path}: neither valid TOML nor JSON: {exc}") from exc


class _Reader:
    """Walks the raw data once, naming the path of the first problem it meets."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> WorldError:
        return WorldError(f"{self.source}: {where}: {problem}")

    def text(self, entry: Mapping[str, Any], key: str, where: str) -> str:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(
                f"{where}.{key}",
                "expected a non-empty string" + ("" if key in entry else " (missing)"),
            )
        return value

    def entries(self, data: Mapping[str, Any], key: str) -> list[tuple[str, Mapping[str, Any]]]:
        value = data.get(key)
        if not isinstance(value, list) or not value:
            raise self.fail(
                key, "expected a non-empty list" + ("" if key in data else " (missing)")
            )
        found = []
        for index, entry in enumerate(value):
            where = f"{key}[{index}]"
            if not isinstance(entry, Mapping):
                raise self.fail(where, "expected an object")
            found.append((where, entry))
        return found

    def unique(self, seen: dict[str, Any], key: str, where: str, what: str) -> None:
        if key in seen:
            raise self.fail(where, f"duplicate {what} {key!r}")

    def world(self, data: Any) -> World:
        if not isinstance(data, Mapping):
            raise self.fail(
                "top level", "expected an object with clients, subjects, resources and actions"
            )
        # What GET /sandbox/v1/world serves reads back: its identity member is not world.
        unknown = sorted(
            set(data) - {"clients", "subjects", "resources", "actions", SANDBOX_IDENTITY}
        )
        if unknown:
            raise self.fail("top level", f"unknown key(s) {', '.join(unknown)}")
        clients: dict[str, Client] = {}
        for where, entry in self.entries(data, "clients"):
            client_id = self.text(entry, "client_id", where)
            self.unique(clients, client_id, where, "client_id")
            clients[client_id] = self.client(client_id, entry, where)
        subjects: dict[str, Subject] = {}
        for where, entry in self.entries(data, "subjects"):
            subject_id = self.text(entry, "id", where)
            self.unique(subjects, subject_id, where, "subject id")
            subjects[subject_id] = Subject(subject_id, self.credentials(entry, where))
        resources: dict[str, Resource] = {}
        for where, entry in self.entries(data, "resources"):
            resource_id = self.text(entry, "id", where)
            self.unique(resources, resource_id, where, "resource id")
            kind = self.text(entry, "type", where)
            if not kind.startswith(RESOURCE_TYPE_PREFIX) or kind == RESOURCE_TYPE_PREFIX:
                raise self.fail(
                    f"{where}.type", f"expected {RESOURCE_TYPE_PREFIX}<kind>, got {kind!r}"
                )
            owner = self.text(entry, "owner", where)
            if owner not in subjects:
                raise self.fail(f"{where}.owner", f"no subject {owner!r}")
            resources[resource_id] = Resource(resource_id, kind, owner)
        actions: dict[str, Action] = {}
        for where, entry in self.entries(data, "actions"):
            name = self.text(entry, "name", where)
            self.unique(actions, name, where, "action name")
            actions[name] = Action(name, self.required_types(entry, where))
        return World(clients, subjects, resources, actions)

    def flag(self, entry: Mapping[str, Any], key: str, where: str) -> bool:
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(f"{where}.{key}", "expected true or false")
        return value

    def client(self, client_id: str, entry: Mapping[str, Any], where: str) -> Client:
        return read_client(self, client_id, entry, where)

    def credentials(self, entry: Mapping[str, Any], where: str) -> dict[str, str]:
        raw = entry.get("credentials", {})
        if not isinstance(raw, Mapping):
            raise self.fail(f"{where}.credentials", "expected an object")
        credentials: dict[str, str] = {}
        for kind, value in raw.items():
            if kind not in CREDENTIAL_KINDS:
                raise self.fail(
                    f"{where}.credentials",
                    f"unknown credential kind {kind!r} (known: {', '.join(CREDENTIAL_KINDS)})",
                )
            if not isinstance(value, str) or not value:
                raise self.fail(f"{where}.credentials.{kind}", "expected a non-empty string")
            if kind == "totp":
                _check_base32(
                    value, lambda problem, k=kind: self.fail(f"{where}.credentials.{k}", problem)
                )
            credentials[kind] = value
        return credentials

    def required_types(self, entry: Mapping[str, Any], where: str) -> tuple[str, ...]:
        raw = entry.get("required_types", [])
        if not isinstance(raw, list):
            raise self.fail(f"{where}.required_types", "expected a list")
        for kind in raw:
            if kind not in CREDENTIAL_KINDS:
                raise self.fail(
                    f"{where}.required_types",
                    f"unknown credential kind {kind!r} (known: {', '.join(CREDENTIAL_KINDS)})",
                )
        if len(set(raw)) != len(raw):
            raise self.fail(f"{where}.required_types", "a kind is listed twice")
        return tuple(raw)


def _check_base32(secret: str, fail: Any) -> None:
    """A TOTP secret must decode as base32 and carry at least 112 bits (pyotp's floor)."""
    try:
        raw = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    except (binascii.Error, ValueError) as exc:
        raise fail("expected a base32 TOTP secret") from exc
    if len(raw) * 8 < 112:
        raise fail("a TOTP secret needs at least 112 bits (23 base32 characters)")


__all__ = [
    "CLIENT_KEY_SIZE",
    "DEFAULT_WORLD_FILE",
    "Action",
    "Client",
    "Resource",
    "Subject",
    "World",
    "WorldError",
]
