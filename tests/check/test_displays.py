"""The notebook display of a check report: its rows by SPEC section with coloured verdicts and
each row's evidence (the exchanges, with their curl commands), the text ``repr`` as it was,
and no secret in either. No service: the evidence is recorded from scripted answers."""

from __future__ import annotations

import html
import json
import re

from authzkit.check.output import grouped, terminal
from authzkit.check.report_display import VERDICT_TONES
from authzkit.check.results import SECTIONS, CheckReport, CheckRow, Evidence
from authzkit.client.exchanges import Recorder
from authzkit.client.transport import HttpResponse
from authzkit.wire.html import TONES

from support.audit import assert_clean

CLIENT_SECRET = "DISPLAY-check-client-secret-77aa"
ACCESS_TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaGVjay1kaXNwbGF5In0.c2lnbmF0dXJlLWNoZWNr"
SUBJECT_TOKEN = "DISPLAY-check-subject-session-31c4"
PIN = "8264019375"
SECRETS = [CLIENT_SECRET, ACCESS_TOKEN, SUBJECT_TOKEN, PIN]
BASE = "http://svc.test"


def _evidence() -> tuple[Evidence, Evidence]:
    recorder = Recorder()
    token = recorder.record(
        "POST",
        BASE + "/api/v3.1/oauth/tokens",
        name="token",
        started_at=0.0,
        headers=None,
        json_body={"clientId": "check-client", "clientSecret": CLIENT_SECRET},
        response=HttpResponse(
            200,
            {"Content-Type": "application/json"},
            json.dumps({"accessToken": ACCESS_TOKEN, "expiresIn": 60}).encode(),
            3.0,
        ),
    )
    authorize = recorder.record(
        "POST",
        BASE + "/resources/v1/authorization/actions/authorize",
        name="authorize",
        started_at=0.0,
        headers={"Authorization": "Bearer " + ACCESS_TOKEN},
        json_body={"subject": {"token": SUBJECT_TOKEN, "context": {"pin": PIN}}},
        response=HttpResponse(
            200, {}, json.dumps({"action": {"status": "authorized", "name": "x"}}).encode(), 4.0
        ),
    )
    return Evidence.from_exchange(token), Evidence.from_exchange(authorize)


def _report() -> CheckReport:
    token, authorize = _evidence()
    rows = [
        CheckRow("errors.unauthorized", "<odd> title", "SPEC §Errors", "errors", "pass", "ok"),
        CheckRow("token.fields", "fields", "SPEC §Token", "token", "pass", "ok", False, (token,)),
        CheckRow(
            "authorize.wrong_subject",
            "another subject's resource",
            "SPEC §Authorize",
            "authorize",
            "fail",
            "expected HTTP 403 srn:error:unauthorized; got HTTP 200 authorized",
            True,
            (token, authorize),
        ),
        CheckRow("authorize.published", "nil", "SPEC §Authorize", "authorize", "diff", "nil"),
        CheckRow("transport.request_id", "x-request-id", "—", "transport", "skip", "absent"),
    ]
    target = {"base_url": BASE, "token_url": BASE + "/t", "dialect": "draft", "sandbox": True}
    return CheckReport(target, rows)


def test_the_report_shows_its_rows_with_coloured_verdicts_and_evidence() -> None:
    report = _report()
    text = repr(report)
    assert text == "CheckReport(5 rows: pass=2, diff=1, fail=1, skip=1)"
    card = report._repr_html_()
    assert_clean("a check report's display", card, SECRETS)
    assert_clean("a check report's repr", text, SECRETS)
    for forbidden in ("<script", "<style", "<link", " src=", "url("):
        assert forbidden not in card.lower(), forbidden
    for verdict in ("pass", "diff", "fail (security)", "skip"):
        tint = TONES[VERDICT_TONES[verdict.split()[0]]][0]
        assert re.search(rf"background:{re.escape(tint)}[^>]*>{re.escape(verdict)}<", card), verdict
    assert "a row failed" in card and BASE in card and "sandbox, dialect draft" in card
    assert "&lt;odd&gt; title" in card and "<odd>" not in card
    # the rows by section, in the order every other form of the report uses
    sections = [section for section, _ in grouped(report)]
    assert sections == [s for s in SECTIONS if s in sections]
    positions = [card.index(f">{section}<") for section in sections]
    assert positions == sorted(positions)
    # each row's evidence opens under it: the exchanges, their answers and curl commands
    assert card.count("<details") == 2 and "2 exchanges" in card and "1 exchange<" in card
    token, authorize = report.row("authorize.wrong_subject").evidence
    for evidence in (token, authorize):
        assert html.escape(evidence.curl) in card
        assert html.escape(f"POST {evidence.url}") in card
    assert "$ACCESS_TOKEN" in card and "$SUBJECT_TOKEN" in card


def test_a_report_without_a_failure_says_so_and_its_terminal_form_is_unchanged() -> None:
    report = CheckReport(
        {"base_url": BASE, "dialect": "published", "sandbox": False},
        [CheckRow("token.type", "Bearer", "SPEC §Token", "token", "pass", "Bearer")],
    )
    card = report._repr_html_()
    assert "no row failed" in card and "real environment, dialect published" in card
    assert repr(report) == "CheckReport(1 rows: pass=1, diff=0, fail=0, skip=0)"
    assert terminal(report) == (
        f"authzkit check: {BASE} (real environment, dialect published)\n"
        "\n"
        "[token]\n"
        "  PASS  token.type                         Bearer\n"
        "\n"
        "1 rows: 1 pass, 0 diff, 0 fail, 0 skip"
    )
