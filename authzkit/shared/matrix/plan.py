"""The policy matrix's plan and its run: who asks, for which actions on which resources
(:class:`MatrixPlan`), then one plain authorize request per cell, never a challenge
solution, so a real PIN counter is never touched (docs/internals.md, "The policy matrix").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.shared.connection import TOKEN_HOLDER
from authzkit.shared.matrix.table import MatrixCell, MatrixResource, PolicyMatrix, outcome_cell
from authzkit.wire import errors
from authzkit.wire.actions import ACTIONS
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.redact import Secret
from authzkit.wire.spec import DEFAULT_RESOURCE_TYPE

if TYPE_CHECKING:
    from authzkit.client.facade import AuthzClient
    from authzkit.shared.connection import Connection

USER_AGENT = "authzkit-matrix"
WORLD_KEYS = ("clients", "subjects", "resources", "actions")  # a world document's world
# How the subject of AUTHZKIT_SUBJECT_TOKEN is named (a real environment's only one; a
# sandbox's when the variable is set and no --subject is given).
REAL_SUBJECT = TOKEN_HOLDER
# Failures that say nothing about the subject's permissions (no answer, no access token, a
# caller without the resource_server flag): they end the matrix instead of filling its cells.
NOT_ABOUT_POLICY = (
    errors.TransportError,
    errors.TokenRequestError,
    errors.AccessTokenRejectedError,
    errors.ClientNotPermittedError,
    ConfigError,
)


@dataclass(frozen=True)
class MatrixPlan:
    """Who asks, for which actions on which resources; known before any request is sent."""

    subject: str
    actions: tuple[str, ...]
    resources: tuple[MatrixResource, ...]

    @property
    def requests(self) -> int:
        """How many authorize requests the matrix sends (one per cell)."""
        return len(self.actions) * len(self.resources)

    def announce(self) -> str:
        """The line printed before the first request."""
        return (
            f"subject {self.subject}: {len(self.actions)} action(s) x "
            f"{len(self.resources)} resource(s) = {self.requests} plain authorize "
            f"request(s), no challenge solution is sent"
        )


def _names(value: str | Sequence[str] | None) -> list[str] | None:
    """``"a,b"`` or ``["a", "b"]`` as a list without blanks or repeats; None stays None."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    return list(dict.fromkeys(item.strip() for item in items if item and item.strip()))


def _labelled(resources: list[tuple[str, str, str | None]]) -> tuple[MatrixResource, ...]:
    """Short column labels (an id's first 8 characters, its owner) while they stay unique."""
    short = [(rid[:8] + "…" if len(rid) > 12 else rid) for rid, _, _ in resources]
    if len(set(short)) < len(short):
        short = [rid for rid, _, _ in resources]
    return tuple(
        MatrixResource(rid, rtype, label + (f" ({owner})" if owner else ""), owner)
        for (rid, rtype, owner), label in zip(resources, short, strict=True)
    )


def _default_subject(world: Mapping[str, Any]) -> str:
    """The default subject of a sandbox's world document, by the world's one rule."""
    from authzkit.sandbox.world import World

    return World.from_json({k: v for k, v in world.items() if k in WORLD_KEYS}).default_subject()


def plan_matrix(
    settings: Settings,
    world: Mapping[str, Any] | None = None,
    *,
    subject: str | None = None,
    actions: str | Sequence[str] | None = None,
    resources: str | Sequence[str] | None = None,
) -> MatrixPlan:
    """What the matrix will ask, checked before any request; a :class:`ConfigError` names
    the option or variable that is missing. ``world`` is the sandbox's (None: a real one)."""
    chosen_actions, chosen_resources = _names(actions), _names(resources)
    if world is not None:
        known = {r["id"]: r for r in world.get("resources", [])}
        subjects = [s["id"] for s in world.get("subjects", [])]
        if subject is None:  # an explicit AUTHZKIT_SUBJECT_TOKEN wins over the world's
            subject = REAL_SUBJECT if settings.subject_token else _default_subject(world)
        elif subject not in subjects:
            raise ConfigError(
                f"--subject {subject!r} is not in the sandbox world (known: {', '.join(subjects)})"
            )
        if chosen_actions is None:
            chosen_actions = [a["name"] for a in world.get("actions", [])]
        ids = list(known) if chosen_resources is None else chosen_resources
        fallback = settings.resource_type or DEFAULT_RESOURCE_TYPE
        listed = [
            (
                rid,
                known[rid]["type"] if rid in known else fallback,
                known[rid]["owner"] if rid in known else None,
            )
            for rid in ids
        ]
    else:
        if subject is not None:
            raise ConfigError(
                "--subject names a sandbox subject; on a real environment the "
                "subject is the holder of AUTHZKIT_SUBJECT_TOKEN"
            )
        subject = REAL_SUBJECT
        if settings.subject_token is None:
            raise ConfigError(
                "set AUTHZKIT_SUBJECT_TOKEN to the session token of the subject "
                "whose permissions the matrix shows"
            )
        if chosen_actions is None:  # the actions every command chooses the same way
            chosen_actions = _names([settings.chosen_action(kind) or "" for kind in ACTIONS])
            if not chosen_actions:
                raise ConfigError(
                    f"on a real environment pass --actions a,b (or set "
                    f"{' / '.join(a.variable for a in ACTIONS.values())})"
                )
        if chosen_resources is None:
            chosen_resources = _names(
                [settings.resource_id or "", settings.foreign_resource_id or ""]
            )
            if not chosen_resources:
                raise ConfigError(
                    "on a real environment pass --resources r1,r2 (or set "
                    "AUTHZKIT_RESOURCE_ID / AUTHZKIT_FOREIGN_RESOURCE_ID)"
                )
        rtype = settings.resource_type or DEFAULT_RESOURCE_TYPE
        listed = [(rid, rtype, None) for rid in chosen_resources]
    if not chosen_actions or not listed:
        raise ConfigError(f"--{'actions' if not chosen_actions else 'resources'} names none")
    return MatrixPlan(subject, tuple(chosen_actions), _labelled(listed))


def ask(
    client: AuthzClient,
    subject_token: str | Secret,
    action: str,
    resource: MatrixResource,
    *,
    user_agent: str = USER_AGENT,
) -> MatrixCell:
    """One plain authorize request (no solution) turned into a cell. A failure that says
    nothing about the policy (:data:`NOT_ABOUT_POLICY`) is raised instead."""
    try:
        result: Authorized | ChallengeRequired | AuthzError = client.authorize(
            action,
            resource_id=resource.id,
            resource_type=resource.type,
            subject_token=subject_token,
            user_agent=user_agent,
        )
    except NOT_ABOUT_POLICY:
        raise
    except AuthzError as exc:
        result = exc
    return outcome_cell(result, action, resource)


def run_plan(connection: Connection, plan: MatrixPlan) -> PolicyMatrix:
    """Send the plan's plain authorize requests on ``connection``; the answered matrix."""
    named = None if plan.subject == REAL_SUBJECT else plan.subject
    token = Secret(connection.subject_token(named))
    cells = tuple(
        ask(connection.client, token.reveal(), action, resource)
        for action in plan.actions
        for resource in plan.resources
    )
    return PolicyMatrix(plan.subject, plan.actions, plan.resources, cells)


def policy_matrix(
    connection: Connection,
    *,
    subject: str | None = None,
    actions: str | Sequence[str] | None = None,
    resources: str | Sequence[str] | None = None,
) -> PolicyMatrix:
    """The policy matrix of ``connection`` (sandbox: its world by default; real: the lists
    given)."""
    world = connection.world() if connection.is_sandbox else None
    plan = plan_matrix(
        connection.settings, world, subject=subject, actions=actions, resources=resources
    )
    return run_plan(connection, plan)


__all__ = [
    "NOT_ABOUT_POLICY",
    "REAL_SUBJECT",
    "MatrixPlan",
    "ask",
    "plan_matrix",
    "policy_matrix",
    "run_plan",
]
