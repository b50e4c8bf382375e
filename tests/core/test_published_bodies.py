"""The provider's published bodies (docs/dialects.md) parse as the draft's do (fake server)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from authzkit import (
    Authorized,
    BadRequestError,
    ChallengeRequired,
    ConfigError,
    TokenRequestError,
    UnauthorizedError,
)
from authzkit.client.answers import choose_answer, pick_answer
from authzkit.client.facade import AuthzClient
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import AccessTokenRejectedError, AuthzError
from authzkit.wire.jwe import decrypt

from support.fake_service import AUTHORIZE, FakeService, Reply

UUID = "6f1c1b8e-6a55-4c1f-9f57-0d1f2a3b4c5d"
CHALLENGE_UUID = "0b7c4a4e-6f35-4c1f-9c1a-3a9f0c9d2b11"
PUBLISHED_200 = {
    "action": {"name": "transfer_funds", "response": "nil", "status": "authorized"},
    "id": UUID,
    "optional_actions": [],
}
# The provider's three documented challenge shapes (docs/dialects.md)
VARIANT_1 = {
    "challenge": {"id": CHALLENGE_UUID, "required_types": ["password"]},
    "details": {"error": "challenge_required"},
    "id": UUID,
    "type": "srn:error:challenge_required",
}
VARIANT_2 = {
    "challenge": {
        "id": CHALLENGE_UUID,
        "required_types": ["pin"],
        "type": "srn:error:challenge_required",
        "details": {"error": "challenge_required"},
    }
}
VARIANT_3 = {
    "id": 0,
    "type": "srn:error:challenge_required",
    "challenge": {"id": CHALLENGE_UUID, "required_types": ["face_match", "pin"]},
}


def _authorize(client: AuthzClient, **extra: Any) -> Authorized | ChallengeRequired:
    return client.authorize(
        "transfer_funds", resource_id="r", subject_token="subject-token", **extra
    )


def test_published_success_reads_like_the_drafts(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(AUTHORIZE, Reply(200, PUBLISHED_200))
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized) and outcome.authorized
    assert (outcome.id, outcome.response, outcome.shape) == (UUID, None, "A")
    assert outcome.raw["action"]["response"] == "nil"  # the raw body is kept as sent


@pytest.mark.parametrize("identifier", [0, 7, UUID])
def test_every_id_is_kept_zero_included(
    fake: FakeService, fake_client: AuthzClient, identifier: int | str
) -> None:
    fake.script(AUTHORIZE, Reply(200, {**PUBLISHED_200, "id": identifier}))
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized)
    assert outcome.id == identifier


@pytest.mark.parametrize(
    "body, kinds, details",
    [
        (VARIANT_1, ("password",), {"error": "challenge_required"}),
        (VARIANT_2, ("pin",), {"error": "challenge_required"}),
        (VARIANT_3, ("face_match", "pin"), {}),
    ],
)
def test_the_three_challenge_variants(
    fake: FakeService,
    fake_client: AuthzClient,
    body: dict[str, Any],
    kinds: tuple[str, ...],
    details: dict[str, Any],
) -> None:
    fake.script(AUTHORIZE, Reply(403, body))
    outcome = _authorize(fake_client)
    assert isinstance(outcome, ChallengeRequired)
    assert outcome.challenge_id == CHALLENGE_UUID and outcome.required_types == kinds
    assert outcome.type == "srn:error:challenge_required" and dict(outcome.details) == details


def test_a_challenge_id_of_zero_is_a_challenge_id() -> None:
    challenge = ChallengeRequired.from_json(
        {"type": "srn:error:challenge_required", "challenge": {"id": 0, "required_types": ["pin"]}}
    )
    assert challenge.challenge_id == 0


@pytest.mark.parametrize(
    "body, error",
    [
        (
            {
                "type": "srn:error:unauthorized",
                "id": UUID,
                "details": {"error": "unauthorized"},
                "challenge": "nil",
            },
            UnauthorizedError,
        ),
        (
            {
                "challenge": "nil",
                "details": {"error": "bad_authorize_request"},
                "id": UUID,
                "type": "srn:error:bad_authorize_request",
            },
            BadRequestError,
        ),
    ],
)
def test_error_bodies_with_challenge_nil(
    fake: FakeService, fake_client: AuthzClient, body: dict[str, Any], error: type[AuthzError]
) -> None:
    fake.script(AUTHORIZE, Reply(403, body))
    with pytest.raises(error) as caught:
        _authorize(fake_client)
    assert caught.value.type == body["type"] and caught.value.status == 403


@pytest.mark.parametrize("kind, value", [("password", "correct horse"), ("face_match", "ok")])
def test_unknown_kinds_are_answerable_from_a_mapping(kind: str, value: str) -> None:
    challenge = ChallengeRequired.from_json(
        {**VARIANT_1, "challenge": {"id": CHALLENGE_UUID, "required_types": [kind]}}
    )
    answers = {"pin": "1234", kind: value}
    assert pick_answer(challenge, answers) == (kind, value)
    assert choose_answer(challenge, {kind: value}).kind == kind
    with pytest.raises(ConfigError, match=f"accepts {kind} but the answers offer pin"):
        choose_answer(challenge, {"pin": "1234"})


def test_a_password_challenge_round_trip(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(AUTHORIZE, Reply(403, VARIANT_1), Reply(200, PUBLISHED_200))
    outcome = fake_client.authorize_with_challenge(
        "transfer_funds",
        answers={"password": "correct horse"},
        resource_id="r",
        subject_token="subject-token",
    )
    assert outcome.authorized and outcome.id == UUID
    solution = fake.requests[AUTHORIZE][1].body["subject"]["context"]["challenge_solution"]
    assert fake.key is not None
    payload = json.loads(decrypt(solution, lambda kid: fake.key))
    assert payload == {"challenge_id": CHALLENGE_UUID, "password": "correct horse"}


# -- OAuth 2.0 error bodies -------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, body, cls",
    [
        (
            400,
            {"error": "invalid_client", "error_description": "Invalid client credentials"},
            TokenRequestError,
        ),
        (
            401,
            {
                "error": "unauthorized_client",
                "error_description": "INVALID_CREDENTIALS: Invalid client credentials",
            },
            TokenRequestError,
        ),
        (401, {"error": "invalid_token"}, AccessTokenRejectedError),
        (503, {"error": "temporarily_unavailable"}, AuthzError),
        (400, {"error": "something_new"}, AuthzError),
    ],
)
def test_oauth_errors_keep_their_code_as_type(
    status: int, body: dict[str, Any], cls: type[AuthzError]
) -> None:
    error = error_from_response(status, json.dumps(body), what="token")
    assert type(error) is cls
    assert (error.type, error.status, error.body) == (body["error"], status, body)
    assert body["error"] in str(error)
    if "error_description" in body:
        assert body["error_description"] in str(error)
