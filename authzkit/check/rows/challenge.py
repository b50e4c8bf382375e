"""Rows of SPEC §Challenge object, §States and §Building a challenge solution.

The security rows (a solution accepted twice, or for another action or resource) are the
properties a resource server relies on: they fail whatever SPEC leaves open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from authzkit.check.probe import Probe
from authzkit.check.results import Finding, RowSpec, Skip
from authzkit.check.verdicts import answer, body_of, differs, failed, passed, refused
from authzkit.wire.spec import CHALLENGE_REQUIRED, CREDENTIAL_KINDS, is_challenge

SPEC_CHALLENGE = "SPEC §Challenge object"
SPEC_STATES = "SPEC §States and transitions"
SPEC_SOLUTION = "SPEC §Building a challenge solution"


def _object_problems(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(published differences, failures)`` of a challenge 403 body."""
    published: list[str] = []
    problems: list[str] = []
    inner = body.get("challenge")
    if not isinstance(inner, dict):
        return published, ["no challenge object"]
    if inner.get("id") in (None, ""):
        problems.append("no challenge.id")
    kinds = inner.get("required_types")
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        problems.append(f"challenge.required_types {kinds!r}")
    elif any(k not in CREDENTIAL_KINDS for k in kinds):
        published.append(f"required_types outside SPEC's kinds ({', '.join(kinds)})")
    if inner.get("type") == CHALLENGE_REQUIRED:
        details = inner.get("details")
        if not isinstance(details, dict) or details.get("error") != "challenge_required":
            problems.append("challenge.details.error is not challenge_required")
    elif body.get("type") == CHALLENGE_REQUIRED:
        published.append("challenge type at top level")
    else:
        problems.append("no type srn:error:challenge_required")
    return published, problems


def challenge_object(probe: Probe) -> Finding:
    response = probe.authorize(probe.challenge_action(), name="check:challenge")
    if response.status != 403 or not is_challenge(response.body()):
        return failed(f"HTTP 403 {CHALLENGE_REQUIRED}", response)
    published, problems = _object_problems(body_of(response))
    if problems:
        return failed("the challenge object of SPEC", came="; ".join(problems))
    if published:
        return differs("; ".join(published))
    return passed("challenge.id, required_types, type and details.error as SPEC shows")


def _authorized(response: Any) -> bool:
    action = body_of(response).get("action")
    return (
        response.status == 200 and isinstance(action, dict) and action.get("status") == "authorized"
    )


def solved(kind: str) -> Callable[[Probe], Finding]:
    def check(probe: Probe) -> Finding:
        action = probe.action_for_kind(kind)
        value = probe.answer(kind)
        challenge = probe.challenge(action)
        if kind not in challenge.required_types:
            raise Skip(
                f"the challenge of {action} asks for "
                f"{', '.join(challenge.required_types)}, not {kind}"
            )
        value = probe.answer(kind)  # a TOTP is computed at the moment it is sent
        response = probe.solve(challenge, kind, value, action=action)
        if _authorized(response):
            return passed(f"{kind} solution for {action} → 200 authorized")
        return failed("HTTP 200 authorized after a correct solution", response)

    check.__name__ = f"solved_{kind}"
    return check


def _solved_once(probe: Probe) -> tuple[str, str]:
    """Solve one challenge; ``(action, solution)`` of the accepted JWE."""
    challenge = probe.challenge()
    kind, value = probe.answerable_kind(challenge)
    solution = probe.encrypt({"challenge_id": challenge.challenge_id, kind: value})
    action = probe.challenge_action()
    response = probe.authorize(action, solution=solution, name="check:solution")
    if not _authorized(response):
        raise Skip(f"needs challenge.solved.{kind}")
    return action, solution


def single_use(probe: Probe) -> Finding:
    action, solution = _solved_once(probe)
    replay = probe.authorize(action, solution=solution, name="check:replay")
    if replay.status == 200:
        return failed("the replayed solution refused", came="HTTP 200: accepted twice")
    if refused(replay):
        return passed(f"replay refused: {answer(replay)}")
    return failed("a 4xx refusal of the replay", replay)


def _misdirected(
    probe: Probe, *, action: str | None = None, resource_id: str | None = None, what: str
) -> Finding:
    challenge = probe.challenge()
    kind, value = probe.answerable_kind(challenge)
    response = probe.solve(
        challenge, kind, value, action=action, resource_id=resource_id, name="check:misdirected"
    )
    if response.status == 200:
        return failed(f"a solution refused for {what}", came="HTTP 200: accepted")
    if refused(response):
        return passed(f"refused for {what}: {answer(response)}")
    return failed("a 4xx refusal", response)


def bound_to_action(probe: Probe) -> Finding:
    other = probe.other_challenge_action()
    return _misdirected(probe, action=other, what=f"another action ({other})")


def bound_to_resource(probe: Probe) -> Finding:
    other = probe.other_resource()
    outcome = _misdirected(probe, resource_id=other, what="another resource")
    if (
        outcome.verdict == "pass"
        and other == probe.foreign_resource()
        and "srn:error:unauthorized" in outcome.detail
    ):
        # The subject may not touch that resource at all: a service that checks permission
        # before the solution refuses it whether or not solutions are bound to resources.
        return Finding(
            "skip",
            "inconclusive: the other resource was refused as "
            "srn:error:unauthorized (not the subject's), which does not "
            "show whether a solution is bound to its resource",
        )
    return outcome


def expiry(probe: Probe) -> Finding:
    probe.advance(0)  # skips on a real environment before any request
    ttl = float(probe.connection.sandbox.challenge_ttl)  # type: ignore[union-attr]
    challenge = probe.challenge()
    probe.answerable_kind(challenge)
    probe.advance(ttl + 1)
    kind, value = probe.answerable_kind(challenge)
    response = probe.solve(challenge, kind, value, name="check:expired_challenge")
    if response.status == 200:
        return failed(
            f"a challenge refused {ttl:.0f} s after it was issued", came="HTTP 200: accepted"
        )
    if refused(response):
        return passed(f"refused after {ttl:.0f} s: {answer(response)}")
    return failed("a 4xx refusal", response)


ROWS = (
    RowSpec(
        "challenge.object",
        "challenge 403 carries the challenge object",
        SPEC_CHALLENGE,
        challenge_object,
        1,
    ),
    *(
        RowSpec(
            f"challenge.solved.{kind}", f"a {kind} challenge solved", SPEC_SOLUTION, solved(kind), 2
        )
        for kind in CREDENTIAL_KINDS
    ),
    RowSpec(
        "challenge.single_use",
        "a replayed solution is refused",
        SPEC_STATES,
        single_use,
        3,
        security=True,
    ),
    RowSpec(
        "challenge.bound_to_action",
        "a solution is refused for another action",
        SPEC_STATES,
        bound_to_action,
        2,
        security=True,
    ),
    RowSpec(
        "challenge.bound_to_resource",
        "a solution is refused for another resource",
        SPEC_STATES,
        bound_to_resource,
        2,
        security=True,
    ),
    RowSpec("challenge.expiry", "an expired challenge is refused", SPEC_STATES, expiry, 2),
)

__all__ = ["ROWS"]
