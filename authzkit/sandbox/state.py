"""What the sandbox remembers between requests: open challenges, used assertion ids, counters.

Shared by the server thread and the caller's, each behind one lock made on first use (one
made before gevent patches ``threading`` can deadlock Locust); every memory is bounded
(docs/internals.md, "What the sandbox remembers").
"""

from __future__ import annotations

import heapq
import uuid
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from authzkit.wire.clock import Clock
from authzkit.wire.locks import LazilyLocked

MAX_OPEN_CHALLENGES = 100_000
MAX_REMEMBERED_ASSERTIONS = 100_000


@dataclass
class Challenge:
    """An open challenge: bound to one subject, action and resource; single-use."""

    id: str
    subject: str
    action: str
    resource_id: str
    required_types: tuple[str, ...]
    expires_at: float
    wrong_answers: int = 0

    def to_json(self) -> dict[str, Any]:
        """The ``challenge`` object of the 403 body, exactly as SPEC shows it."""
        return {
            "id": self.id,
            "required_types": list(self.required_types),
            "type": "srn:error:challenge_required",
            "details": {"error": "challenge_required"},
        }


class ChallengeStore(LazilyLocked):
    """Open challenges by id, oldest first (the TTL is fixed, so oldest = first to expire)."""

    def __init__(
        self, *, clock: Clock, ttl: float, max_attempts: int, capacity: int = MAX_OPEN_CHALLENGES
    ) -> None:
        self.clock = clock
        self.ttl = ttl
        self.max_attempts = max_attempts
        self.capacity = capacity
        self._open: OrderedDict[str, Challenge] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def issue(
        self, subject: str, action: str, resource_id: str, required_types: tuple[str, ...]
    ) -> Challenge:
        """A new challenge for this subject + action + resource."""
        now = self.clock()
        challenge = Challenge(
            str(uuid.uuid4()), subject, action, resource_id, required_types, now + self.ttl
        )
        with self._lock:
            self._evict(now)
            self._open[challenge.id] = challenge
        return challenge

    def _evict(self, now: float) -> None:
        open_ = self._open
        while open_:
            oldest = next(iter(open_.values()))
            if oldest.expires_at > now and len(open_) < self.capacity:
                break
            open_.popitem(last=False)

    def find(
        self, challenge_id: str, subject: str, action: str, resource_id: str
    ) -> Challenge | None:
        """The open challenge with this id bound to exactly this subject, action and resource.

        Unknown, expired, already used and foreign challenges all read as ``None``
        (``srn:error:challenge_not_found``); an expired one is dropped on sight.
        """
        with self._lock:
            challenge = self._open.get(challenge_id)
            if challenge is None:
                return None
            if challenge.expires_at <= self.clock():
                del self._open[challenge_id]
                return None
        if (challenge.subject, challenge.action, challenge.resource_id) != (
            subject,
            action,
            resource_id,
        ):
            return None
        return challenge

    def solved(self, challenge: Challenge) -> bool:
        """Use the challenge up; False if a concurrent request used it first (a replay)."""
        with self._lock:
            return self._open.pop(challenge.id, None) is not None

    def wrong_answer(self, challenge: Challenge) -> None:
        """Count a wrong answer; the challenge dies at ``max_attempts``."""
        with self._lock:
            challenge.wrong_answers += 1
            if challenge.wrong_answers >= self.max_attempts:
                self._open.pop(challenge.id, None)

    def clear(self) -> None:
        """Forget every open challenge (``Sandbox.reset``)."""
        with self._lock:
            self._open.clear()


class UsedAssertions(LazilyLocked):
    """The ``jti`` of every client assertion accepted and not yet expired (RFC 7523 §3:
    an assertion is single-use). Bounded: past ``capacity``, the entry that expires soonest
    is forgotten first, so a flood of assertions with far-away ``exp`` cannot grow memory.
    """

    def __init__(self, *, clock: Clock, capacity: int = MAX_REMEMBERED_ASSERTIONS) -> None:
        self.clock = clock
        self.capacity = capacity
        self._expiry: dict[tuple[str, str], float] = {}
        self._by_expiry: list[tuple[float, tuple[str, str]]] = []  # a heap

    def __len__(self) -> int:
        return len(self._expiry)

    def first_use(self, client_id: str, jti: str, expires_at: float) -> bool:
        """Record ``jti`` of ``client_id`` until ``expires_at``; False if it is a reuse."""
        key = (client_id, jti)
        now = self.clock()
        with self._lock:
            heap = self._by_expiry
            while heap and (heap[0][0] <= now or len(heap) >= self.capacity):
                del self._expiry[heapq.heappop(heap)[1]]
            if key in self._expiry:
                return False
            self._expiry[key] = expires_at
            heapq.heappush(heap, (expires_at, key))
            return True

    def clear(self) -> None:
        """Forget every assertion id (``Sandbox.reset``)."""
        with self._lock:
            self._expiry.clear()
            self._by_expiry.clear()


class Counters(LazilyLocked):
    """What ``GET /sandbox/v1/stats`` reports: issuances and authorize outcomes by type."""

    def __init__(self) -> None:
        self.tokens_issued = 0
        self.keys_served = 0
        self.challenges_issued = 0
        self.authorize: Counter[str] = Counter()

    def count(self, name: str) -> None:
        """Add one to ``tokens_issued``, ``keys_served`` or ``challenges_issued``."""
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def outcome(self, type_: str) -> None:
        """Add one authorize outcome (``authorized`` or an error type)."""
        with self._lock:
            self.authorize[type_] += 1

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of every counter (the stats JSON)."""
        with self._lock:
            return {
                "tokens_issued": self.tokens_issued,
                "keys_served": self.keys_served,
                "challenges_issued": self.challenges_issued,
                "authorize": dict(self.authorize),
            }

    def clear(self) -> None:
        """Zero every counter (``Sandbox.reset``)."""
        with self._lock:
            self.tokens_issued = self.keys_served = self.challenges_issued = 0
            self.authorize.clear()


__all__ = [
    "MAX_OPEN_CHALLENGES",
    "MAX_REMEMBERED_ASSERTIONS",
    "Challenge",
    "ChallengeStore",
    "Counters",
    "UsedAssertions",
]
