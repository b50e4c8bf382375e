"""A sandbox subject as a test needs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Subject:
    """A sandbox subject as a test needs it: a fresh session token, a resource, credentials."""

    id: str
    token: str = field(repr=False)
    resource_id: str
    foreign_resource_id: str
    credentials: dict[str, str] = field(repr=False)

    def answers(self) -> dict[str, str]:
        """Every credential, the TOTP as its secret (the client generates the code)."""
        return {("totp_secret" if k == "totp" else k): v for k, v in self.credentials.items()}


def subject_of(sandbox: Any, subject: str) -> Subject:
    world = sandbox.world.to_json()
    credentials = next(s["credentials"] for s in world["subjects"] if s["id"] == subject)
    own = next(r["id"] for r in world["resources"] if r["owner"] == subject)
    foreign = next(r["id"] for r in world["resources"] if r["owner"] != subject)
    return Subject(subject, sandbox.session_token(subject), own, foreign, dict(credentials))


__all__ = ["Subject", "subject_of"]
