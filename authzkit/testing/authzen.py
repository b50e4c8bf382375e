"""What the pytest plugin knows of the AuthZEN dialect: its endpoints' names in the
sandbox's record, what one recorded request asked and was answered (the subject and
resource of its body, ``authorized``/``denied`` from its decision), and a PDP sandbox
reached by ``--authz-url``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from authzkit.wire.authzen import SEARCH_KINDS

if TYPE_CHECKING:
    from authzkit.sandbox.admin import SandboxAdmin
    from authzkit.sandbox.authzen.world import AuthzenWorld, Entity
    from authzkit.sandbox.received import Received

# The sandbox's names of the AuthZEN endpoints, as its record writes them.
EVALUATION = "evaluation"
METADATA = "metadata"
ENDPOINTS = frozenset(
    {METADATA, EVALUATION, "evaluations", *(f"search_{kind}" for kind in SEARCH_KINDS)}
)
# The client fetches the metadata once: plumbing, as the token and key endpoints are.
PLUMBING = (METADATA,)
DENIED = "denied"


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def asked(received: Received) -> dict[str, str | None]:
    """The ``action``, ``resource_id``, ``resource_type`` and ``subject`` (its id) of an
    AuthZEN request body (a batch's defaults; None where the body names none)."""
    body = _object(received.request_body)
    resource = _object(body.get("resource"))
    return {
        "action": _text(_object(body.get("action")).get("name")),
        "resource_id": _text(resource.get("id")),
        "resource_type": _text(resource.get("type")),
        "subject": _text(_object(body.get("subject")).get("id")),
    }


def decision(received: Received) -> str | None:
    """``authorized`` or ``denied`` for a 2xx of the evaluation endpoint; None otherwise."""
    if received.endpoint != EVALUATION or not 200 <= received.status < 300:
        return None
    found = _object(received.response_body).get("decision")
    return ("authorized" if found else DENIED) if isinstance(found, bool) else None


def entity_json(entities: tuple[Entity, ...], kind: str, id_: str) -> dict[str, Any]:
    """The world's ``kind`` with that id, as a request names it (type, id, properties); a
    :class:`KeyError` naming the ids the world has."""
    for entity in entities:
        if entity.id == id_:
            return entity.to_json()
    known = ", ".join(repr(e.id) for e in entities) or "none"
    raise KeyError(f"the AuthZEN world has no {kind} {id_!r} (its {kind}s: {known})")


class ExternalPdpSandbox:
    """An AuthZEN sandbox started elsewhere (``authzkit sandbox --dialect authzen``):
    its world, counters, reset and record over ``/sandbox/v1/*``; no OAuth client."""

    dialect = "authzen"
    issuer = None

    def __init__(self, admin: SandboxAdmin, world: AuthzenWorld) -> None:
        self.admin = admin
        self.base_url = admin.base_url
        self.world = world

    def stats(self) -> dict[str, Any]:
        return self.admin.stats()

    def reset(self, record: bool | None = None) -> None:
        self.admin.reset(record)

    def received(self) -> list[Received]:
        return self.admin.received()

    def stop(self) -> None:
        """Close the connection (the sandbox is not ours to stop)."""
        self.admin.session.close()


__all__ = [
    "DENIED",
    "ENDPOINTS",
    "EVALUATION",
    "METADATA",
    "PLUMBING",
    "ExternalPdpSandbox",
    "asked",
    "decision",
    "entity_json",
]
