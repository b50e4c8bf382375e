"""How one submission reads, as the form's HTML and as text: pure, no widgets, no secrets."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets", reason="the notebooks extra is not installed")

from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.widgets.attempt import Attempt, attempt_html, attempt_lines, label
from authzkit.wire.errors import (
    AuthzError,
    BadChallengeSolutionError,
    ChallengeNotFoundError,
    TransportError,
    UnauthenticatedError,
)

HEADER = {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": "k1"}


def test_labels_name_the_kinds_as_a_person_would() -> None:
    assert [label(k) for k in ("pin", "login_password", "totp", "other")] == [
        "PIN",
        "Login password",
        "TOTP code",
        "other",
    ]


def test_authorized_reads_as_authorized_with_shape_and_header() -> None:
    attempt = Attempt(
        "pin", "typed", outcome=Authorized("transfer_funds", "authorized", shape="B"), header=HEADER
    )
    text = attempt_html(attempt)
    assert "<b>authorized</b>" in text and "HTTP 200, shape B" in text
    assert "answered with PIN (typed)" in text
    assert "&quot;kid&quot;: &quot;k1&quot;" in text
    assert attempt.final and attempt.authorized


def test_another_status_is_not_shown_as_success() -> None:
    attempt = Attempt("pin", "typed", outcome=Authorized("transfer_funds", "pending"))
    assert not attempt.authorized
    assert "&#9888;" in attempt_html(attempt)


def test_a_known_error_shows_meaning_and_remedy_from_the_table() -> None:
    error = BadChallengeSolutionError("wrong", type="srn:error:bad_challenge_solution", status=403)
    text = attempt_html(Attempt("pin", "typed", error=error))
    assert "srn:error:bad_challenge_solution" in text and "HTTP 403" in text
    assert "The challenge answer is incorrect." in text and "What to do:" in text


def test_an_unknown_error_type_keeps_its_string_and_message_scrubbed() -> None:
    error = AuthzError("the service said 9876", type="srn:error:brand_new", status=409)
    text = attempt_html(Attempt("pin", "typed", error=error), secrets=["9876"])
    assert "srn:error:brand_new" in text and "HTTP 409" in text
    assert "9876" not in text


def test_a_bug_of_ours_is_shown_scrubbed() -> None:
    text = attempt_html(Attempt("pin", "typed", error=RuntimeError("boom 9876")), secrets=["9876"])
    assert "RuntimeError: boom ****" in text


def test_which_attempts_end_the_challenge() -> None:
    def final(error: Exception) -> bool:
        return Attempt("pin", "typed", error=error).final

    assert not final(
        BadChallengeSolutionError("x", type="srn:error:bad_challenge_solution", status=403)
    )
    assert not final(TransportError("timed out"))
    assert not final(ValueError("ours"))
    assert final(ChallengeNotFoundError("x", type="srn:error:challenge_not_found", status=403))
    assert final(UnauthenticatedError("x", type="srn:error:unauthenticated", status=401))


def test_a_new_challenge_asks_to_answer_again() -> None:
    challenge = ChallengeRequired(challenge_id="c2", required_types=("totp",))
    attempt = Attempt("pin", "typed", outcome=challenge)
    assert "new challenge" in attempt_html(attempt)
    assert attempt.describe() == "a new challenge (HTTP 403, totp)"


def test_text_lines_say_how_it_was_submitted() -> None:
    attempt = Attempt(
        "pin",
        "the sandbox world",
        outcome=Authorized("a", "authorized"),
        header=HEADER,
        automatic=True,
    )
    assert attempt_lines(1, attempt) == [
        "  attempt 1: submitted automatically with pin (the sandbox world) -> "
        "authorized (HTTP 200, shape A)",
        '    protected header: {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": "k1"}',
    ]
