"""Typed outcomes of an authorization request: :class:`Authorized` or :class:`ChallengeRequired`.

Each is built by one ``from_json`` that keeps the raw body and tolerates the shapes the
provider's published documents show beyond the draft (docs/internals.md, "Outcomes").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from authzkit.wire.errors import AuthzError, UnexpectedResponseError
from authzkit.wire.spec import CHALLENGE_REQUIRED, error_type

NIL = "nil"  # how the published dialect writes an absent value


def _identifier(value: Any) -> int | str | None:
    """An id as the service sent it: an integer stays an integer, anything else a string."""
    if value is None or isinstance(value, bool):
        return None
    return value if isinstance(value, int) else str(value)


@dataclass(frozen=True)
class Asked:
    """What an outcome answers, as :meth:`AuthzClient.authorize` asked it: the action and
    the resource (never the subject's token). Kept for the outcome's display only."""

    action: str
    resource_id: str
    resource_type: str


@dataclass(frozen=True)
class Authorized:
    """HTTP 200: the action is authorized.

    ``shape`` is ``"A"`` for a plain success (with ``id`` and ``response``) and ``"B"``
    for the success after a challenge solution (no ``id``).
    """

    action: str
    status: str
    id: int | str | None = None
    response: Any = None
    optional_actions: list[Any] | dict[str, Any] = field(default_factory=list)
    shape: Literal["A", "B"] = "A"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    asked: Asked | None = field(default=None, repr=False, compare=False)
    # An AuthZEN PDP's decision ``context`` (reasons, obligations), kept as it sent it.
    context: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def authorized(self) -> bool:
        """True when the service said ``authorized`` (the only status the draft shows)."""
        return self.status == "authorized"

    def _repr_html_(self) -> str:
        """A notebook's view: a card with the decision, the action, the id, the shape."""
        if "decision" in self.raw:  # an AuthZEN PDP's answer
            from authzkit.client.authzen.display import decision_html

            return decision_html(self)
        from authzkit.client.outcome_display import authorized_html

        return authorized_html(self)

    @classmethod
    def from_json(cls, body: Any) -> Authorized:
        # Every load-test request lands here: exact-type checks on the plain dicts json
        # gives, ABC checks (Mapping) only for anything else.
        action = body.get("action") if body.__class__ is dict or isinstance(body, Mapping) else None
        if action.__class__ is not dict and not isinstance(action, Mapping):
            raise UnexpectedResponseError(
                "HTTP 200 without an 'action' object in the body", status=200, body=body
            )
        status = action.get("status")
        if status.__class__ is not str:
            raise UnexpectedResponseError("HTTP 200 without action.status", status=200, body=body)
        optional = action.get("optional_actions", body.get("optional_actions", []))
        if optional.__class__ is not list:
            optional = (
                dict(optional)
                if isinstance(optional, Mapping)
                else (list(optional) if isinstance(optional, list) else [])
            )
        identifier = body.get("id")
        response = action.get("response")
        return cls(
            action=str(action.get("name", "")),
            status=status,
            id=identifier if identifier.__class__ is int else _identifier(identifier),
            response=None if response == NIL else response,
            optional_actions=optional,
            shape="A" if "id" in body else "B",
            raw=body,
        )


@dataclass(frozen=True)
class Denied:
    """An AuthZEN PDP's ``"decision": false``: an answer (HTTP 200), not an error. The
    PDP's ``context`` (its reasons) is kept as sent."""

    action: str
    context: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    asked: Asked | None = field(default=None, repr=False, compare=False)

    status = "denied"

    @property
    def authorized(self) -> bool:
        return False

    def _repr_html_(self) -> str:
        """A notebook's view: a card with the decision, the action, the PDP's context."""
        from authzkit.client.authzen.display import decision_html

        return decision_html(self)


@dataclass(frozen=True)
class ChallengeRequired:
    """HTTP 403 ``srn:error:challenge_required``: solve the challenge, then ask again."""

    challenge_id: int | str
    required_types: tuple[str, ...]
    type: str = CHALLENGE_REQUIRED
    details: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    asked: Asked | None = field(default=None, repr=False, compare=False)

    status = "challenge_required"

    @property
    def authorized(self) -> bool:
        return False

    def _repr_html_(self) -> str:
        """A notebook's view: a card with the challenge's id and the kinds that answer it."""
        from authzkit.client.outcome_display import challenge_html

        return challenge_html(self)

    @classmethod
    def from_json(cls, body: Any) -> ChallengeRequired:
        challenge = body.get("challenge") if isinstance(body, Mapping) else None
        if not isinstance(challenge, Mapping):
            raise UnexpectedResponseError(
                "challenge_required without a 'challenge' object", status=403, body=body
            )
        challenge_id = _identifier(challenge.get("id"))
        if challenge_id is None:
            raise UnexpectedResponseError(
                "challenge_required without challenge.id", status=403, body=body
            )
        kinds = challenge.get("required_types")
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise UnexpectedResponseError(
                "challenge.required_types is not a list of strings", status=403, body=body
            )
        details = challenge.get("details", body.get("details"))
        return cls(
            challenge_id=challenge_id,
            required_types=tuple(kinds),
            type=error_type(body) or CHALLENGE_REQUIRED,
            details=dict(details) if isinstance(details, Mapping) else {},
            raw=body,
        )


def describe(
    result: Authorized | ChallengeRequired | Denied | BaseException,
    *,
    http: bool = False,
    headline: str | None = None,
) -> str:
    """What the service answered, in one line a person reads (never a secret).

    Without ``http`` (a transcript whose HTTP status has a column of its own):
    ``authorized (shape A, id 7)``, ``challenge_required: pin, totp``,
    ``srn:error:unauthorized``. With ``http`` (a line standing alone: a form, a failure
    row): ``authorized (HTTP 200, shape A, id 7)``, ``challenge_required (HTTP 403, pin,
    totp)``, ``HTTP 403 srn:error:unauthorized``. ``headline`` renames the outcome (a form
    calls a challenge that follows an answer "a new challenge"). An error without a type
    or status reads ``ClassName: message`` with ``http``, its class name without. An
    AuthZEN decision reads ``denied`` (``denied (HTTP 200)`` with ``http``).
    """
    if isinstance(result, Denied) or (isinstance(result, Authorized) and "decision" in result.raw):
        return f"{headline or result.status}{' (HTTP 200)' if http else ''}"
    if isinstance(result, Authorized | ChallengeRequired):
        title = headline or result.status
        if isinstance(result, Authorized):
            details = [f"shape {result.shape}"]
            if result.id is not None:
                shown = str(result.id)  # a UUID id (published dialect) shown by its start
                details.append(f"id {shown[:8]}…" if len(shown) > 12 else f"id {shown}")
        else:
            details = list(result.required_types)
            if not http:
                return f"{title}: {', '.join(details)}"
        prefix = [f"HTTP {200 if isinstance(result, Authorized) else 403}"] if http else []
        return f"{title} ({', '.join(prefix + details)})"
    if isinstance(result, AuthzError) and (result.type or result.status):
        name = result.type or type(result).__name__
        return f"HTTP {result.status} {name}" if http and result.status else name
    return f"{type(result).__name__}: {result}" if http else type(result).__name__


__all__ = ["NIL", "Asked", "Authorized", "ChallengeRequired", "Denied", "describe"]
