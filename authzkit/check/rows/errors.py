"""Rows of SPEC §Errors: each error type provoked once, and what the service answered.

Everything here is harmless on a real environment (garbage, a key nobody holds, an unknown
challenge id, a missing challenge id) except ``errors.bad_challenge_solution``: a wrong
answer may count against a real person's PIN, so it follows :mod:`authzkit.shared.consent`
(``--allow-wrong-answers`` or ``AUTHZKIT_ALLOW_WRONG_ANSWERS=1``).
"""

from __future__ import annotations

from authzkit.check.probe import Probe
from authzkit.check.results import Finding, RowSpec
from authzkit.check.verdicts import SUBJECT_FIELD, body_of, differs, failed, passed, typed_error
from authzkit.client.transport import HttpResponse
from authzkit.wire.spec import UNAUTHENTICATED, error_type

SPEC_ERRORS = "SPEC §Errors"
UNKNOWN_CHALLENGE = "00000000-0000-4000-8000-00000000c0de"
NOT_A_SESSION = "authzkit-check.not-a-session.token"
GARBAGE_JWE = "not-a-jwe"


def unauthenticated(probe: Probe) -> Finding:
    response = probe.authorize(probe.plain_action(), subject_token=NOT_A_SESSION)
    return subject_401(response)


def subject_401(response: HttpResponse) -> Finding:
    """401 ``unauthenticated`` naming the subject's token; without the field: published."""
    if response.status != 401 or error_type(response.body()) != UNAUTHENTICATED:
        return failed(f"HTTP 401 {UNAUTHENTICATED}", response)
    field = body_of(response).get("field")
    if field == SUBJECT_FIELD:
        return passed(f"HTTP 401 {UNAUTHENTICATED}, field {SUBJECT_FIELD}")
    if field is None:
        return differs("401 without field (the same body as an expired access token)")
    return failed(f"field {SUBJECT_FIELD}", came=f"field {field!r}")


def unauthorized(probe: Probe) -> Finding:
    response = probe.authorize(probe.plain_action(), resource_id=probe.foreign_resource())
    return typed_error(response, 403, "srn:error:unauthorized")


def bad_jwe_token(probe: Probe) -> Finding:
    response = probe.authorize(
        probe.challenge_action(), solution=GARBAGE_JWE, name="check:garbage_jwe"
    )
    return typed_error(response, 403, "srn:error:bad_jwe_token")


def unrecognized_key(probe: Probe) -> Finding:
    from authzkit.wire.jwe import KeyPair

    probe.key()
    challenge = probe.challenge()
    throwaway = KeyPair.generate(use="enc", size=2048).public_key()  # nobody holds its pair
    solution = probe.encrypt({"challenge_id": challenge.challenge_id}, key=throwaway)
    response = probe.authorize(
        probe.challenge_action(), solution=solution, name="check:unrecognized_key"
    )
    return typed_error(response, 403, "srn:error:unrecognized_key")


def wrong_challenge_solution(probe: Probe) -> Finding:
    challenge = probe.challenge()
    kind, value = probe.answerable_kind(challenge)
    solution = probe.encrypt({kind: value})  # no challenge_id
    response = probe.authorize(
        probe.challenge_action(), solution=solution, name="check:no_challenge_id"
    )
    return typed_error(response, 403, "srn:error:wrong_challenge_solution")


def bad_challenge_solution(probe: Probe) -> Finding:
    probe.wrong_answer("pin")  # skips before any request when not allowed
    challenge = probe.challenge()
    kind = challenge.required_types[0] if challenge.required_types else "pin"
    response = probe.solve(challenge, kind, probe.wrong_answer(kind), name="check:wrong_answer")
    return typed_error(response, 403, "srn:error:bad_challenge_solution")


def challenge_not_found(probe: Probe) -> Finding:
    challenge = probe.challenge()
    kind, value = probe.answerable_kind(challenge)
    solution = probe.encrypt({"challenge_id": UNKNOWN_CHALLENGE, kind: value})
    response = probe.authorize(
        probe.challenge_action(), solution=solution, name="check:unknown_challenge"
    )
    return typed_error(response, 403, "srn:error:challenge_not_found")


ROWS = (
    RowSpec(
        "errors.unauthenticated",
        "invalid subject session → 401 unauthenticated",
        SPEC_ERRORS,
        unauthenticated,
        1,
    ),
    RowSpec(
        "errors.unauthorized", "foreign resource → 403 unauthorized", SPEC_ERRORS, unauthorized, 1
    ),
    RowSpec(
        "errors.bad_jwe_token", "garbage JWE → 403 bad_jwe_token", SPEC_ERRORS, bad_jwe_token, 1
    ),
    RowSpec(
        "errors.unrecognized_key",
        "JWE for another key → 403 unrecognized_key",
        SPEC_ERRORS,
        unrecognized_key,
        2,
    ),
    RowSpec(
        "errors.wrong_challenge_solution",
        "solution without challenge_id → 403 wrong_challenge_solution",
        SPEC_ERRORS,
        wrong_challenge_solution,
        2,
    ),
    RowSpec(
        "errors.bad_challenge_solution",
        "wrong answer → 403 bad_challenge_solution",
        SPEC_ERRORS,
        bad_challenge_solution,
        2,
    ),
    RowSpec(
        "errors.challenge_not_found",
        "unknown challenge id → 403 challenge_not_found",
        SPEC_ERRORS,
        challenge_not_found,
        2,
    ),
)

__all__ = ["ROWS", "subject_401"]
