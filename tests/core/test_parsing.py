"""Tolerant parsing of what the provider's own documents show beyond the draft (fake server)."""

from __future__ import annotations

from typing import Any

import pytest

from authzkit import (
    AccessTokenRejectedError,
    Authorized,
    AuthzError,
    ChallengeRequired,
    UnauthorizedError,
    UnexpectedResponseError,
    UnrecognizedKeyError,
)
from authzkit.client.facade import AuthzClient

from support.fake_service import AUTHORIZE, FakeService, Reply

CHALLENGE_UUID = "6f1c1b8e-6a55-4c1f-9f57-0d1f2a3b4c5d"


def _authorize(client: AuthzClient) -> Authorized | ChallengeRequired:
    return client.authorize("transfer_funds", resource_id="r", subject_token="subject-token")


@pytest.mark.parametrize(
    "body, expected_id",
    [
        (
            {
                "action": {"name": "a", "response": None, "status": "authorized"},
                "id": 42,
                "optional_actions": [],
            },
            42,
        ),
        (
            {
                "action": {"name": "a", "response": None, "status": "authorized"},
                "id": CHALLENGE_UUID,
                "optional_actions": [],
            },
            CHALLENGE_UUID,
        ),
    ],
)
def test_authorized_ids_int_or_uuid(
    fake: FakeService, fake_client: AuthzClient, body: dict[str, Any], expected_id: int | str
) -> None:
    fake.script(AUTHORIZE, Reply(200, body))
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized)
    assert outcome.id == expected_id and outcome.shape == "A" and outcome.authorized


@pytest.mark.parametrize("optional", [[], [{"name": "x"}], {}, {"x": {"required_types": []}}])
def test_optional_actions_list_or_object(
    fake: FakeService, fake_client: AuthzClient, optional: list[Any] | dict[str, Any]
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(
            200,
            {
                "action": {"name": "a", "status": "authorized", "response": None},
                "id": 1,
                "optional_actions": optional,
            },
        ),
    )
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized)
    assert outcome.optional_actions == optional


@pytest.mark.parametrize("response", [None, "balance: 10 EUR"])
def test_action_response_null_or_string(
    fake: FakeService, fake_client: AuthzClient, response: str | None
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(
            200, {"action": {"name": "a", "status": "authorized", "response": response}, "id": 1}
        ),
    )
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized)
    assert outcome.response == response


def test_shape_b_after_a_solution(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(
        AUTHORIZE,
        Reply(
            200,
            {"action": {"name": "transfer_funds", "status": "authorized", "optional_actions": []}},
        ),
    )
    outcome = _authorize(fake_client)
    assert isinstance(outcome, Authorized)
    assert outcome.shape == "B" and outcome.id is None and outcome.action == "transfer_funds"


@pytest.mark.parametrize(
    "body",
    [
        {
            "challenge": {
                "id": 7,
                "required_types": ["pin"],
                "type": "srn:error:challenge_required",
                "details": {"error": "challenge_required"},
            }
        },
        {
            "type": "srn:error:challenge_required",
            "challenge": {"id": CHALLENGE_UUID, "required_types": ["pin", "totp"]},
        },
    ],
)
def test_challenge_type_inside_or_top_level(
    fake: FakeService, fake_client: AuthzClient, body: dict[str, Any]
) -> None:
    fake.script(AUTHORIZE, Reply(403, body))
    outcome = _authorize(fake_client)
    assert isinstance(outcome, ChallengeRequired)
    assert outcome.challenge_id == body["challenge"]["id"]
    assert outcome.required_types == tuple(body["challenge"]["required_types"])


def test_known_error_type_gets_its_class(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(AUTHORIZE, Reply(403, {"type": "srn:error:unrecognized_key"}))
    with pytest.raises(UnrecognizedKeyError) as caught:
        _authorize(fake_client)
    assert caught.value.status == 403
    assert caught.value.field == "request_body.subject.context.challenge_solution"
    fake.script(AUTHORIZE, Reply(403, {"type": "srn:error:unauthorized", "status": 403}))
    with pytest.raises(UnauthorizedError):
        _authorize(fake_client)


def test_unknown_error_type_is_kept(fake: FakeService, fake_client: AuthzClient) -> None:
    body = {
        "type": "srn:error:quota_exceeded",
        "status": 429,
        "detail": "slow down",
        "field": "request_body.action",
    }
    fake.script(AUTHORIZE, Reply(429, body))
    with pytest.raises(AuthzError) as caught:
        _authorize(fake_client)
    error = caught.value
    assert type(error) is AuthzError
    assert (error.type, error.status, error.field) == (
        "srn:error:quota_exceeded",
        429,
        "request_body.action",
    )
    assert error.body == body and "srn:error:quota_exceeded" in str(error)


def test_html_502_becomes_error_with_status_and_snippet(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    html = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    fake.script(AUTHORIZE, Reply(502, html, content_type="text/html"))
    with pytest.raises(UnexpectedResponseError) as caught:
        _authorize(fake_client)
    assert caught.value.status == 502
    assert "502 Bad Gateway" in str(caught.value)


def test_200_that_is_not_json(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(AUTHORIZE, Reply(200, "OK", content_type="text/plain"))
    with pytest.raises(UnexpectedResponseError, match="not JSON"):
        _authorize(fake_client)


def test_403_challenge_without_id_is_unexpected(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(
            403, {"type": "srn:error:challenge_required", "challenge": {"required_types": ["pin"]}}
        ),
    )
    with pytest.raises(UnexpectedResponseError, match=r"challenge\.id"):
        _authorize(fake_client)


def test_401_without_type_counts_as_rejected_token(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(AUTHORIZE, Reply(401, {}))
    with pytest.raises(AccessTokenRejectedError):
        _authorize(fake_client)
    assert len(fake.requests[AUTHORIZE]) == 2  # one refresh, one retry, then it raises
