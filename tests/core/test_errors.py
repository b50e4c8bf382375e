"""The error table: every SPEC type maps to its own class, and unknown types are kept."""

from __future__ import annotations

import json

import pytest

from authzkit.wire import errors
from authzkit.wire.error_table import ERROR_KINDS, ERRORS, error_body, error_from_response
from authzkit.wire.errors import (
    AccessTokenRejectedError,
    AuthzError,
    BadJweTokenError,
    ChallengeSolutionError,
    UnauthenticatedError,
    UnexpectedResponseError,
)

SPEC_TYPES = {
    "srn:error:unauthenticated": (401, errors.UnauthenticatedError),
    "srn:error:bad_jwe_token": (403, errors.BadJweTokenError),
    "srn:error:unrecognized_key": (403, errors.UnrecognizedKeyError),
    "srn:error:wrong_challenge_solution": (403, errors.WrongChallengeSolutionError),
    "srn:error:bad_challenge_solution": (403, errors.BadChallengeSolutionError),
    "srn:error:challenge_not_found": (403, errors.ChallengeNotFoundError),
    "srn:error:unauthorized": (403, errors.UnauthorizedError),
    "srn:error:challenge_required": (403, errors.ChallengeRequiredError),
}


@pytest.mark.parametrize("type_", sorted(SPEC_TYPES))
def test_every_spec_type_round_trips_through_the_table(type_: str) -> None:
    status, cls = SPEC_TYPES[type_]
    body = error_body(type_)
    error = error_from_response(status, json.dumps(body))
    assert type(error) is cls
    assert (error.type, error.status) == (type_, status)
    assert error.field == ERRORS[type_].field
    assert error.body == body
    assert type_ in str(error) and str(status) in str(error)


def test_solution_errors_share_a_base_and_name_the_solution_field() -> None:
    error = error_from_response(403, json.dumps(error_body("srn:error:bad_jwe_token")))
    assert isinstance(error, ChallengeSolutionError)
    assert error.field == "request_body.subject.context.challenge_solution"


def test_unknown_type_is_kept_on_the_base_error() -> None:
    error = error_from_response(409, b'{"type": "srn:error:brand_new", "detail": "new"}')
    assert type(error) is AuthzError
    assert error.type == "srn:error:brand_new"
    assert error.status == 409
    assert "new" in str(error)


def test_type_inside_the_challenge_object_is_found() -> None:
    body = {"challenge": {"type": "srn:error:unauthenticated"}}
    assert isinstance(error_from_response(401, json.dumps(body)), UnauthenticatedError)


def test_html_error_page_becomes_an_error_with_status_and_snippet() -> None:
    page = "<html><body><h1>502 Bad Gateway</h1>" + "x" * 1000 + "</body></html>"
    error = error_from_response(502, page.encode())
    assert isinstance(error, UnexpectedResponseError)
    assert error.status == 502
    assert "502 Bad Gateway" in str(error)
    assert len(str(error)) < 400


def test_untyped_401_means_the_access_token() -> None:
    assert isinstance(error_from_response(401, b"{}"), AccessTokenRejectedError)


def test_error_body_field_override_and_extras() -> None:
    body = error_body("srn:error:bad_request", field="request_body.action.name", hint=1)
    assert body == {
        "type": "srn:error:bad_request",
        "status": 400,
        "detail": ERRORS["srn:error:bad_request"].meaning,
        "field": "request_body.action.name",
        "hint": 1,
    }


def test_every_row_has_meaning_and_remedy() -> None:
    for kind in ERROR_KINDS:
        assert kind.meaning and kind.remedy
        assert issubclass(kind.exception, AuthzError)
    assert issubclass(BadJweTokenError, ChallengeSolutionError)
