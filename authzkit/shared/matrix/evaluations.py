"""The policy matrix of an AuthZEN PDP: for each subject, every action x resource asked in one
evaluations call (``execute_all``), answered as the same :class:`PolicyMatrix` (authorized or
denied cells). What is asked comes from a sandbox world or from the caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from authzkit.shared.matrix.table import MatrixCell, MatrixResource, PolicyMatrix
from authzkit.wire.authzen import EXECUTE_ALL
from authzkit.wire.errors import ConfigError


class DecisionMatrix(PolicyMatrix):
    """A :class:`PolicyMatrix` of AuthZEN decisions: its counts say authorized and denied."""

    def counts(self) -> dict[str, int]:
        authorized = sum(1 for cell in self.cells if cell.kind == "authorized")
        return {"authorized": authorized, "denied": len(self.cells) - authorized}


@dataclass(frozen=True)
class EvaluationsPlan:
    """Who is asked about what: entities as the wire wants them (``type``, ``id``,
    ``properties``), actions by name."""

    subjects: tuple[Mapping[str, Any], ...]
    actions: tuple[str, ...]
    resources: tuple[Mapping[str, Any], ...]

    def announce(self) -> str:
        """The line printed before the first request."""
        per = len(self.actions) * len(self.resources)
        return (
            f"{len(self.subjects)} subject(s) x {len(self.actions)} action(s) x "
            f"{len(self.resources)} resource(s): one evaluations call of {per} "
            f"evaluation(s) per subject ({EXECUTE_ALL})"
        )


def names(value: str | None, option: str) -> list[str] | None:
    """``"a,b"`` (the value of ``option``) as a list without blanks or repeats; None stays
    None, no name at all is refused."""
    if value is None:
        return None
    found = list(dict.fromkeys(item.strip() for item in value.split(",") if item.strip()))
    if not found:
        raise ConfigError(f"{option}: expected comma-separated names, got {value!r}")
    return found


def _pick(
    known: Sequence[Mapping[str, Any]], wanted: list[str] | None, option: str
) -> tuple[Mapping[str, Any], ...]:
    if wanted is None:
        return tuple(known)
    by_id = {str(entity["id"]): entity for entity in known}
    unknown = [name for name in wanted if name not in by_id]
    if unknown:
        raise ConfigError(
            f"{option}: the world has no {', '.join(map(repr, unknown))} "
            f"(it has {', '.join(by_id)})"
        )
    return tuple(by_id[name] for name in wanted)


def plan_from_world(
    world: Mapping[str, Any],
    *,
    subject: str | None = None,
    actions: str | None = None,
    resources: str | None = None,
) -> EvaluationsPlan:
    """Every subject (or ``subject``), action and resource of an AuthZEN sandbox world,
    narrowed by the comma-separated ``actions``/``resources``; an unknown name refused."""
    known_actions = [str(a["name"]) for a in world.get("actions", [])]
    wanted = names(actions, "--actions")
    unknown = [a for a in wanted or [] if a not in known_actions]
    if unknown:
        raise ConfigError(
            f"--actions: the world has no {', '.join(map(repr, unknown))} "
            f"(it has {', '.join(known_actions)})"
        )
    return EvaluationsPlan(
        _pick(world.get("subjects", []), None if subject is None else [subject], "--subject"),
        tuple(wanted or known_actions),
        _pick(world.get("resources", []), names(resources, "--resources"), "--resources"),
    )


def plan_for_pdp(
    settings: Any,
    *,
    subject: str | None = None,
    actions: str | None = None,
    resources: str | None = None,
    subject_type: str = "user",
) -> EvaluationsPlan:
    """The plan on a PDP whose entities nobody listed: ``--subject`` or
    ``AUTHZKIT_SUBJECT_ID`` (type and properties from ``AUTHZKIT_SUBJECT_*``),
    ``--actions`` or ``AUTHZKIT_PLAIN_ACTION``, ``--resources`` or ``AUTHZKIT_RESOURCE_ID``
    (of type ``AUTHZKIT_RESOURCE_TYPE``; ``AUTHZKIT_RESOURCE_PROPERTIES`` for that id)."""
    subject_id = subject or settings.subject_id
    action_names = names(actions, "--actions") or (
        [settings.plain_action] if settings.plain_action else []
    )
    resource_ids = names(resources, "--resources") or (
        [settings.resource_id] if settings.resource_id else []
    )
    missing = [
        what
        for what, found in (
            ("--subject or AUTHZKIT_SUBJECT_ID", subject_id),
            ("--actions or AUTHZKIT_PLAIN_ACTION", action_names),
            ("--resources or AUTHZKIT_RESOURCE_ID", resource_ids),
            ("AUTHZKIT_RESOURCE_TYPE", settings.resource_type),
        )
        if not found
    ]
    if missing:
        raise ConfigError(f"a matrix on an AuthZEN PDP needs {', '.join(missing)}")
    who: dict[str, Any] = {"type": settings.subject_type or subject_type, "id": subject_id}
    if settings.subject_properties and subject_id == settings.subject_id:
        who["properties"] = dict(settings.subject_properties)
    listed = []
    for resource_id in resource_ids:
        resource: dict[str, Any] = {"type": settings.resource_type, "id": resource_id}
        if settings.resource_properties and resource_id == settings.resource_id:
            resource["properties"] = dict(settings.resource_properties)
        listed.append(resource)
    return EvaluationsPlan((who,), tuple(action_names), tuple(listed))


def _label(number: int, resource: Mapping[str, Any]) -> MatrixResource:
    return MatrixResource(str(resource["id"]), str(resource["type"]), f"R{number}")


def ask_subject(client: Any, plan: EvaluationsPlan, subject: Mapping[str, Any]) -> DecisionMatrix:
    """One evaluations call for ``subject``: every action x resource of ``plan``."""
    asked = [
        {"action": action, "resource": resource}
        for action in plan.actions
        for resource in plan.resources
    ]
    outcomes = client.evaluations(asked, semantic=EXECUTE_ALL, subject=subject)
    labels = [_label(n, r) for n, r in enumerate(plan.resources, start=1)]
    cells = tuple(
        MatrixCell(
            action,
            labels[i % len(labels)],
            "authorized" if outcome.authorized else "denied",
            "authorized" if outcome.authorized else "unauthorized",
            200,
        )
        for i, (action, outcome) in enumerate(
            zip([a for a in plan.actions for _ in plan.resources], outcomes, strict=True)
        )
    )
    return DecisionMatrix(str(subject["id"]), plan.actions, tuple(labels), cells)


def evaluations_matrices(client: Any, plan: EvaluationsPlan) -> list[DecisionMatrix]:
    """The matrix of each subject of ``plan``, in its order."""
    return [ask_subject(client, plan, subject) for subject in plan.subjects]


__all__ = [
    "DecisionMatrix",
    "EvaluationsPlan",
    "ask_subject",
    "evaluations_matrices",
    "names",
    "plan_for_pdp",
    "plan_from_world",
]
