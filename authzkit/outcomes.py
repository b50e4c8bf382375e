"""Typed outcomes of an authorization request: :class:`Authorized` or :class:`ChallengeRequired`.

Each is built by one ``from_json`` that keeps the raw body, and is tolerant of what the
provider's own published documents show beyond the draft: ids as integers or UUID
strings, ``optional_actions`` as a list or an object, ``action.response`` null or a
string, and the challenge ``type`` at the top level of the body or inside ``challenge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from authzkit.errors import UnexpectedResponseError

CHALLENGE_REQUIRED = "srn:error:challenge_required"
CREDENTIAL_KINDS = ("pin", "login_password", "totp")


def _identifier(value: Any) -> int | str | None:
    """An id as the service sent it: an integer stays an integer, anything else a string."""
    if value is None or isinstance(value, bool):
        return None
    return value if isinstance(value, int) else str(value)


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

    @property
    def authorized(self) -> bool:
        """True when the service said ``authorized`` (the only status the draft shows)."""
        return self.status == "authorized"

    @classmethod
    def from_json(cls, body: Any) -> Authorized:
        # Every load-test request lands here: exact-type checks on the plain dicts json
        # gives, ABC checks (Mapping) only for anything else.
        action = body.get("action") if body.__class__ is dict or isinstance(body, Mapping) \
            else None
        if action.__class__ is not dict and not isinstance(action, Mapping):
            raise UnexpectedResponseError(
                "HTTP 200 without an 'action' object in the body", status=200, body=body)
        status = action.get("status")
        if status.__class__ is not str:
            raise UnexpectedResponseError(
                "HTTP 200 without action.status", status=200, body=body)
        optional = action.get("optional_actions", body.get("optional_actions", []))
        if optional.__class__ is not list:
            optional = dict(optional) if isinstance(optional, Mapping) else (
                list(optional) if isinstance(optional, list) else [])
        identifier = body.get("id")
        return cls(
            action=str(action.get("name", "")),
            status=status,
            id=identifier if identifier.__class__ is int else _identifier(identifier),
            response=action.get("response"),
            optional_actions=optional,
            shape="A" if "id" in body else "B",
            raw=body,
        )


@dataclass(frozen=True)
class ChallengeRequired:
    """HTTP 403 ``srn:error:challenge_required``: solve the challenge, then ask again."""

    challenge_id: int | str
    required_types: tuple[str, ...]
    type: str = CHALLENGE_REQUIRED
    details: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    status = "challenge_required"

    @property
    def authorized(self) -> bool:
        return False

    @classmethod
    def from_json(cls, body: Any) -> ChallengeRequired:
        challenge = body.get("challenge") if isinstance(body, Mapping) else None
        if not isinstance(challenge, Mapping):
            raise UnexpectedResponseError(
                "challenge_required without a 'challenge' object", status=403, body=body)
        challenge_id = _identifier(challenge.get("id"))
        if challenge_id is None:
            raise UnexpectedResponseError(
                "challenge_required without challenge.id", status=403, body=body)
        kinds = challenge.get("required_types")
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise UnexpectedResponseError(
                "challenge.required_types is not a list of strings", status=403, body=body)
        details = challenge.get("details")
        return cls(
            challenge_id=challenge_id,
            required_types=tuple(kinds),
            type=str(challenge.get("type") or body.get("type") or CHALLENGE_REQUIRED),
            details=dict(details) if isinstance(details, Mapping) else {},
            raw=body,
        )


def is_challenge(body: Any) -> bool:
    """True when a 403 body demands a challenge (type at the top level or in ``challenge``)."""
    if not isinstance(body, Mapping):
        return False
    challenge = body.get("challenge")
    inner = challenge.get("type") if isinstance(challenge, Mapping) else None
    return CHALLENGE_REQUIRED in (body.get("type"), inner)


Outcome = Authorized | ChallengeRequired
