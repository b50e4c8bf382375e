"""The notebook displays of the core: outcomes, errors, recorded exchanges, the token
provider, the policy matrix and a trace.

Each display: its HTML is there and names what it should; the text ``repr`` is exactly what
it was (nbval compares it in the committed notebooks); neither shows a secret built into the
object (searched like the secrets audit does); the HTML is self-contained and escaped.
No server: a scripted in-process transport answers.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest

from authzkit.cli.trace import render
from authzkit.client.exchanges import Exchange, Recorder, RecordingTransport
from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.client.token import TokenProvider
from authzkit.client.transport import HttpResponse
from authzkit.shared.flows import Step
from authzkit.shared.matrix import MatrixCell, MatrixResource, PolicyMatrix
from authzkit.shared.trace import Trace
from authzkit.wire import errors
from authzkit.wire.clock import ManualClock
from authzkit.wire.error_table import ERRORS, error_from_response
from authzkit.wire.html import TONES, badge, escape, key_values
from authzkit.wire.redact import Secret, mask

from support.audit import assert_clean

CLIENT_SECRET = "DISPLAY-client-secret-5ee1c0de"
ACCESS_TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkaXNwbGF5LWNsaWVudCJ9.c2lnbmF0dXJlLWRpc3BsYXk"
SUBJECT_TOKEN = "DISPLAY-subject-session-9f8e7d6c"
PIN = "7392046158"
PASSWORD = "DISPLAY-password-correct-horse"
SOLUTION = "eyJhbGciOiJSU0EtT0FFUC0yNTYifQ.a2V5LWRpc3BsYXk.aXYtZGlzcGxheQ.Y2lwaGVy.dGFnLWRpc3BsYXk"
PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
SECRETS = [CLIENT_SECRET, ACCESS_TOKEN, SUBJECT_TOKEN, PIN, PASSWORD, SOLUTION, PRIVATE_KEY]
BASE = "http://svc.test"


def assert_self_contained(fragment: str) -> None:
    """Inline styles only, nothing run, nothing fetched."""
    lowered = fragment.lower()
    for forbidden in ("<script", "<style", "<link", "<img", "<iframe", " src=", "url(", "@import"):
        assert forbidden not in lowered, forbidden
    assert re.search(r"<[^>]*\son\w+\s*=", lowered) is None, "an event handler attribute"


def shown(obj: Any) -> str:
    """The HTML a notebook shows for ``obj``, checked to be self-contained and clean."""
    fragment = obj._repr_html_()
    assert isinstance(fragment, str) and fragment.startswith("<div")
    assert_self_contained(fragment)
    assert_clean(f"the display of {type(obj).__name__}", fragment, SECRETS)
    assert_clean(f"the repr of {type(obj).__name__}", repr(obj), SECRETS)
    return str(fragment)


class ScriptedTransport:
    """Answers each request with the next scripted ``(status, body)`` (bytes as JSON)."""

    def __init__(self, *replies: tuple[int, Any]) -> None:
        self.replies = list(replies)

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> HttpResponse:
        status, body = self.replies.pop(0)
        content = json.dumps(body).encode()
        return HttpResponse(status, {"Content-Type": "application/json"}, content, 12.5)


# -- the shared helper ---------------------------------------------------------------------


def test_the_helper_escapes_every_value_and_leaves_fragments_alone() -> None:
    hostile = '<script>alert("x")</script>'
    table = key_values([("<k>", hostile), ("left out", None), ("badge", badge(hostile, "ok"))])
    assert "<script" not in table and html.escape(hostile) in table
    assert "left out" not in table and "&lt;k&gt;" in table
    assert TONES["ok"][0] in badge("x", "ok") and TONES["neutral"][0] in badge("x", "nonsense")
    assert escape(escape("<b>")) == "&lt;b&gt;"  # an Html fragment is never escaped twice
    assert "color:#" not in table and "color: #" not in table  # the theme keeps its text colour


def test_the_secret_search_finds_a_leak() -> None:
    with pytest.raises(AssertionError):
        assert_clean("a leaking display", f"<td>{mask(ACCESS_TOKEN)} {ACCESS_TOKEN}</td>", SECRETS)
    with pytest.raises(AssertionError):
        assert_clean("a leaking display", f"<td>pin {PIN}</td>", SECRETS)


# -- outcomes ------------------------------------------------------------------------------

SHAPE_A: dict[str, Any] = {
    "action": {"name": "show_account_balance_public", "response": None, "status": "authorized"},
    "id": 7,
    "optional_actions": ["view_statement"],
    "subject": {"token": SUBJECT_TOKEN},  # kept in .raw, never shown
}
PUBLISHED_A: dict[str, Any] = {
    "action": {
        "name": "transfer_funds",
        "status": "authorized",
        "response": "nil",
        "context": {"resource_id": "acct-42", "resource_type": "srn:resource:account"},
    },
    "id": "0b7c4a4e-6f35-4c1f-9c1a-3a9f0c9d2b11",
}
CHALLENGE: dict[str, Any] = {
    "type": "srn:error:challenge_required",
    "challenge": {
        "id": 11,
        "required_types": ["pin", "totp"],
        "type": "srn:error:challenge_required",
        "details": {"error": "challenge_required"},
    },
}


def test_an_authorized_outcome_shows_a_card_and_keeps_its_repr() -> None:
    outcome = Authorized.from_json(SHAPE_A)
    assert repr(outcome) == (
        "Authorized(action='show_account_balance_public', status='authorized', id=7, "
        "response=None, optional_actions=['view_statement'], shape='A')"
    )
    card = shown(outcome)
    for expected in (
        "authorized",
        "HTTP 200",
        "show_account_balance_public",
        ">7<",
        "A (a plain success)",
        "draft",
        "view_statement",
        TONES["ok"][0],
    ):
        assert expected in card, expected
    assert "resource" not in card  # the draft's answer does not name it


def test_a_published_authorized_outcome_names_its_dialect_and_resource() -> None:
    card = shown(Authorized.from_json(PUBLISHED_A))
    assert "published" in card and "0b7c4a4e-6f35-4c1f-9c1a-3a9f0c9d2b11" in card
    assert "acct-42 (srn:resource:account)" in card
    solved = shown(Authorized.from_json({"action": {"name": "x", "status": "authorized"}}))
    assert "B (after a solved challenge)" in solved and "dialect" not in solved


def test_what_the_service_sends_back_is_masked_in_the_card() -> None:
    body = {
        "action": {
            "name": "<b>odd</b>",
            "status": "authorized",
            "response": {"access_token": ACCESS_TOKEN, "pin": PIN, "balance": 12},
        },
        "id": 3,
        "optional_actions": {"password": PASSWORD},
    }
    outcome = Authorized.from_json(body)
    card = outcome._repr_html_()
    assert_self_contained(card)
    assert_clean("an outcome's card", card, SECRETS)
    assert "&lt;b&gt;odd&lt;/b&gt;" in card and "<b>odd" not in card
    assert "&quot;balance&quot;: 12" in card  # the rest of the response, as indented JSON


def test_a_challenge_shows_its_kinds_and_keeps_its_repr() -> None:
    outcome = ChallengeRequired.from_json(CHALLENGE)
    assert repr(outcome) == (
        "ChallengeRequired(challenge_id=11, required_types=('pin', 'totp'), "
        "type='srn:error:challenge_required', details={'error': 'challenge_required'})"
    )
    card = shown(outcome)
    for expected in ("challenge required", "HTTP 403", ">11<", ">pin<", ">totp<", "draft"):
        assert expected in card, expected
    assert "encrypted" in card  # what to do next
    published = {**CHALLENGE, "id": "req-1", "details": {"error": "challenge_required"}}
    assert "published" in shown(ChallengeRequired.from_json(published))


def test_an_outcome_of_the_client_names_the_action_and_resource_it_answers() -> None:
    session = ScriptedTransport(
        (200, {"accessToken": ACCESS_TOKEN, "expiresIn": 60, "tokenType": "Bearer"}),
        (200, SHAPE_A),
        (403, CHALLENGE),
    )
    client = AuthzClient(
        base_url=BASE, client_id="display-client", client_secret=CLIENT_SECRET, session=session
    )
    request: dict[str, Any] = {"resource_id": "acct-42", "subject_token": Secret(SUBJECT_TOKEN)}
    outcome = client.authorize("show_account_balance_public", **request)
    assert outcome == Authorized.from_json(SHAPE_A)  # what was asked is not compared
    assert repr(outcome) == repr(Authorized.from_json(SHAPE_A))  # nor shown in the repr
    assert "acct-42 (srn:resource:account)" in shown(outcome)
    challenge = client.authorize("transfer_funds", **request)
    card = shown(challenge)
    assert ">transfer_funds<" in card and "acct-42 (srn:resource:account)" in card
    assert repr(challenge) == repr(ChallengeRequired.from_json(CHALLENGE))


# -- errors --------------------------------------------------------------------------------


def test_an_error_shows_its_type_status_field_detail_and_next_step() -> None:
    body = {
        "type": "srn:error:bad_challenge_solution",
        "status": 403,
        "detail": "The challenge answer is incorrect.",
        "field": "request_body.subject.context.challenge_solution",
        "echo": {"challenge_solution": SOLUTION, "pin": PIN},  # kept in .body, never shown
    }
    error = error_from_response(403, json.dumps(body).encode())
    assert repr(error) == (
        "BadChallengeSolutionError(type='srn:error:bad_challenge_solution', status=403, "
        "field='request_body.subject.context.challenge_solution')"
    )
    card = shown(error)
    for expected in (
        "BadChallengeSolutionError",
        "HTTP 403",
        "srn:error:bad_challenge_solution",
        "request_body.subject.context.challenge_solution",
        "The challenge answer is incorrect.",
        html.escape(ERRORS["srn:error:bad_challenge_solution"].remedy),
    ):
        assert expected in card, expected


@pytest.mark.parametrize("name", sorted(errors.__all__))
def test_every_error_class_shows_itself(name: str) -> None:
    cls = getattr(errors, name)
    error = cls("what happened <here>", status=None)
    card = shown(error)
    assert name in card and "no HTTP answer" in card
    assert "what happened &lt;here&gt;" in card
    assert "what to do next" not in card  # no type: the table knows nothing
    assert repr(error) == f"{name}(type=None, status=None, field=None)"


def test_an_unknown_type_shows_without_a_next_step() -> None:
    card = shown(errors.AuthzError("odd", type="srn:error:odd", status=418, field="x"))
    assert "srn:error:odd" in card and "HTTP 418" in card and "what to do next" not in card


# -- recorded exchanges --------------------------------------------------------------------


def _recorded() -> Recorder:
    recorder = Recorder()
    transport = RecordingTransport(
        ScriptedTransport(
            (200, {"accessToken": ACCESS_TOKEN, "expiresIn": 60, "tokenType": "Bearer"}),
            (403, CHALLENGE),
        ),
        recorder,
    )
    transport.request(
        "POST",
        BASE + "/api/v3.1/oauth/tokens",
        name="token",
        json_body={"clientId": "display-client", "clientSecret": CLIENT_SECRET},
    )
    body = {
        "action": {"name": "transfer_funds", "context": {"resource_id": "acct-42"}},
        "subject": {"token": SUBJECT_TOKEN, "context": {"challenge_solution": SOLUTION}},
    }
    transport.request(
        "POST",
        BASE + "/resources/v1/authorization/actions/authorize",
        name="authorize",
        headers={"Authorization": "Bearer " + ACCESS_TOKEN, "Cookie": "session=" + PASSWORD},
        json_body=json.dumps(body).encode(),
    )
    return recorder


def test_an_exchange_shows_request_and_response_side_by_side_with_its_curl() -> None:
    recorder = _recorded()
    token, authorize = recorder.exchanges
    card = shown(authorize)
    for expected in (
        "HTTP 403",
        "authorize",
        "POST " + BASE + "/resources/v1/authorization/actions/authorize",
        "12.5 ms",
        "Request",
        "Response",
        "display:flex",  # side by side when there is room
        "Bearer $ACCESS_TOKEN",
        "$COOKIE",
        "&quot;token&quot;: &quot;$SUBJECT_TOKEN&quot;",  # pretty-printed (indented) JSON
        "&quot;challenge_solution&quot;: &quot;$CHALLENGE_SOLUTION&quot;",
        "&quot;required_types&quot;: [",
        html.escape(authorize.curl()),
    ):
        assert expected in card, expected
    assert "&quot;accessToken&quot;: &quot;****&quot;" in shown(token)  # masked once more
    assert repr(token).startswith(
        "Exchange(method='POST', url='http://svc.test/api/v3.1/oauth/tokens', name='token', "
        "status=200, elapsed_ms=12.5, started_at="
    )


def test_an_exchange_built_by_hand_is_masked_again_for_its_display() -> None:
    exchange = Exchange(
        method="POST",
        url=BASE + "/authorize",
        name="authorize",
        status=200,
        elapsed_ms=1.0,
        started_at=0.0,
        request_headers={"Authorization": "Bearer " + ACCESS_TOKEN},
        request_body={"subject": {"token": SUBJECT_TOKEN}, "clientSecret": CLIENT_SECRET},
        response_headers={"Authorization": "Basic " + PASSWORD},
        response_body={"access_token": ACCESS_TOKEN, "pin": PIN},
    )
    card = exchange._repr_html_()
    assert_self_contained(card)
    assert_clean("a hand-built exchange's display", card, SECRETS)
    assert "$SUBJECT_TOKEN" in card and "$AUTHZKIT_CLIENT_SECRET" in card


def test_an_unanswered_exchange_says_so() -> None:
    exchange = Exchange("GET", BASE + "/keys", "keys", 0, 0.0, 0.0, error="connection refused")
    card = shown(exchange)
    assert "no answer" in card and "connection refused" in card and "No response" in card
    assert repr(exchange) == (
        "Exchange(method='GET', url='http://svc.test/keys', name='keys', status=0, "
        "elapsed_ms=0.0, started_at=0.0, request_headers={}, request_body=None, "
        "error='connection refused')"
    )


def test_a_recorder_shows_one_line_per_exchange() -> None:
    recorder = _recorded()
    assert repr(recorder) == "Recorder(2 exchanges)"
    card = shown(recorder)
    assert "2 exchanges" in card and card.count("<details") == 2
    assert "/api/v3.1/oauth/tokens" in card and "HTTP 200" in card and "HTTP 403" in card
    assert "Nothing recorded yet." in shown(Recorder())


# -- the token provider --------------------------------------------------------------------


def test_the_token_state_shows_masked_with_its_expiry_and_calls() -> None:
    clock = ManualClock(1_000.0)
    provider = TokenProvider(
        auth_url=BASE,
        client_id="display-client",
        client_secret=Secret(CLIENT_SECRET),
        transport=ScriptedTransport(
            (200, {"accessToken": ACCESS_TOKEN, "expiresIn": 60, "tokenType": "Bearer"})
        ),
        clock=clock,
    )
    before = shown(provider)
    assert "no token yet" in before and "token calls so far" in before
    assert provider.token() == ACCESS_TOKEN
    expected_repr = (
        "TokenProvider(token_url='http://svc.test/api/v3.1/oauth/tokens', "
        "client_id='display-client', client_auth='draft', token_calls=1, refreshes=0)"
    )
    assert repr(provider) == expected_repr
    card = shown(provider)
    for expected in ("fresh", "in 60 s", mask(ACCESS_TOKEN), "display-client", "draft"):
        assert expected in card, expected
    assert re.search(r"token calls so far</th><td[^>]*>1<", card)
    clock.advance(50)  # refreshed 15 s before expiry
    assert "due for a refresh" in shown(provider) and "in 10 s" in shown(provider)
    clock.advance(15)
    assert "expired" in shown(provider) and "5.0 s ago" in shown(provider)
    assert repr(provider) == expected_repr


# -- the policy matrix ---------------------------------------------------------------------


def test_the_policy_matrix_tints_each_outcome_and_keeps_its_text() -> None:
    mine = MatrixResource("acct-1", label="acct-1 (alice)", owner="alice")
    theirs = MatrixResource("acct-2", label="acct-2 (bob)", owner="bob")
    cells = (
        MatrixCell("show_balance", mine, "authorized", "authorized", 200),
        MatrixCell("show_balance", theirs, "unauthorized", "unauthorized", 403),
        MatrixCell("transfer_funds", mine, "challenge: pin", "challenge", 403),
        MatrixCell("transfer_funds", theirs, "srn:error:odd", "other", 400),
    )
    matrix = PolicyMatrix("alice", ("show_balance", "transfer_funds"), (mine, theirs), cells)
    assert repr(matrix) == (
        "action          acct-1 (alice)  acct-2 (bob)\n"
        "--------------  --------------  -------------\n"
        "show_balance    authorized      unauthorized\n"
        "transfer_funds  challenge: pin  srn:error:odd\n"
        "\n"
        "resources:\n"
        "  acct-1 (alice)  acct-1  srn:resource:account\n"
        "  acct-2 (bob)    acct-2  srn:resource:account\n"
        "\n"
        "subject alice, 4 cells: 1 authorized, 1 challenge, 1 unauthorized, 1 other"
    )
    card = shown(matrix)
    for outcome, tone in (
        ("authorized", "ok"),
        ("unauthorized", "bad"),
        ("challenge: pin", "warn"),
        ("srn:error:odd", "neutral"),
    ):
        assert re.search(rf"background:{re.escape(TONES[tone][0])}[^>]*>{outcome}<", card), outcome
    assert "acct-2 (bob)" in card and "srn:resource:account" in card and "policy matrix" in card


# -- a trace -------------------------------------------------------------------------------


def test_a_trace_renders_as_markdown_with_its_sequence_diagram() -> None:
    recorder = _recorded()
    steps = [Step("plain authorize", 403, "challenge_required: pin, totp", 12.5)]
    trace = render("plain", steps, recorder.exchanges, where="a test service")
    assert isinstance(trace, Trace) and isinstance(trace, str)
    assert repr(trace) == repr(str(trace))  # the text repr of the str it is
    markdown = trace._repr_markdown_()
    assert markdown == str(trace)
    assert "```mermaid\nsequenceDiagram" in markdown and "# Flow `plain`" in markdown
    assert "RS->>Token: POST /api/v3.1/oauth/tokens" in markdown
    assert_clean("a trace", markdown, SECRETS)
