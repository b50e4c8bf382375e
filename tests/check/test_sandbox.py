"""run_checks on the embedded sandbox in both dialects: draft = pass/skip only, published =
no fail and exactly the known differences as diff."""

from __future__ import annotations

import json

import pytest

from authzkit.check import ROW_IDS, VERDICTS, CheckReport, run_checks
from authzkit.wire.config import Settings

CONTRACT_IDS = (
    "token.request_style",
    "token.fields",
    "token.expires_in",
    "token.type",
    "token.wrong_secret_refused",
    "token.lifetime_honoured",
    "keys.one_enc_rsa_key",
    "keys.key_size",
    "keys.no_private_members",
    "keys.sig_ignored",
    "keys.bearer",
    "authorize.shape_a",
    "authorize.all_fields",
    "authorize.request_hash_user_ip",
    "challenge.object",
    "challenge.solved.pin",
    "challenge.solved.login_password",
    "challenge.solved.totp",
    "challenge.single_use",
    "challenge.bound_to_action",
    "challenge.bound_to_resource",
    "challenge.expiry",
    "errors.unauthenticated",
    "errors.unauthorized",
    "errors.bad_jwe_token",
    "errors.unrecognized_key",
    "errors.wrong_challenge_solution",
    "errors.bad_challenge_solution",
    "errors.challenge_not_found",
    "access_token.expired",
    "access_token.forged",
    "transport.https",
    "transport.correlation_id",
    "transport.timeouts",
)
# The published dialect's known differences from the draft (docs/dialects.md), one row each.
PUBLISHED_DIFFS = {
    "token.request_style": "form-encoded",
    "token.fields": "snake_case",
    "token.type": "lower case",
    "authorize.shape_a": '"nil"',
    "challenge.object": "challenge type at top level",
    "errors.unauthenticated": "401 without field",
    "access_token.expired": "401 without field",
    "access_token.forged": "401 without field",
}
# The draft sandbox sends no x-request-id; SPEC does not ask for one.
DRAFT_SKIPS = {"transport.correlation_id": "SPEC does not require one"}
SECURITY_ROWS = {
    "token.wrong_secret_refused",
    "keys.no_private_members",
    "challenge.single_use",
    "challenge.bound_to_action",
    "challenge.bound_to_resource",
    "transport.https",
}


@pytest.fixture(scope="module")
def draft() -> CheckReport:
    return run_checks(settings=Settings(), dialect="draft")


@pytest.fixture(scope="module")
def published_checks() -> CheckReport:
    return run_checks(settings=Settings(), dialect="published")


def test_rows_are_the_contract_in_order(draft: CheckReport) -> None:
    assert ROW_IDS == CONTRACT_IDS
    assert [row.id for row in draft.rows] == list(CONTRACT_IDS)
    assert all(row.spec.startswith("SPEC §") for row in draft.rows)
    assert {row.id for row in draft.rows if row.security} == SECURITY_ROWS


def test_draft_sandbox_passes_or_skips_with_reasons(draft: CheckReport) -> None:
    verdicts = draft.verdicts()
    assert set(verdicts.values()) <= {"pass", "skip"}, draft.to_json()["rows"]
    skipped = {row.id: row.detail for row in draft.rows if row.verdict == "skip"}
    assert skipped.keys() == DRAFT_SKIPS.keys()
    for row_id, reason in DRAFT_SKIPS.items():
        assert reason in skipped[row_id]
    assert draft.exit_code == 0
    assert draft.target["sandbox"] and draft.target["dialect"] == "draft"


def test_published_sandbox_has_exactly_the_known_diffs(published_checks: CheckReport) -> None:
    verdicts = published_checks.verdicts()
    assert "fail" not in verdicts.values(), published_checks.to_json()["rows"]
    diffs = {row.id: row.detail for row in published_checks.rows if row.verdict == "diff"}
    assert diffs.keys() == PUBLISHED_DIFFS.keys()
    for row_id, words in PUBLISHED_DIFFS.items():
        assert words in diffs[row_id]
    assert verdicts["transport.correlation_id"] == "pass"
    assert published_checks.summary == {
        "pass": 34 - len(PUBLISHED_DIFFS),
        "diff": 8,
        "fail": 0,
        "skip": 0,
        "not-offered": 0,
    }
    assert published_checks.exit_code == 0


def test_rows_keep_safe_evidence(draft: CheckReport, published_checks: CheckReport) -> None:
    for report in (draft, published_checks):
        solved = report.row("challenge.solved.pin")
        assert solved.evidence, "a row keeps the exchanges it relied on"
        last = solved.evidence[-1]
        assert last.status == 200 and last.method == "POST"
        assert "$ACCESS_TOKEN" in last.curl and "$CHALLENGE_SOLUTION" in last.curl
        text = json.dumps(report.to_json())
        for secret in ("sandbox-demo-secret", "alice-password", "PRIVATE KEY"):
            assert secret not in text
        assert all(len(e.body_excerpt) <= 500 for row in report.rows for e in row.evidence)


def test_only_runs_the_matching_rows() -> None:
    report = run_checks(settings=Settings(), only="token.*")
    assert [row.id for row in report.rows] == [i for i in CONTRACT_IDS if i.startswith("token.")]
    assert set(report.verdicts().values()) == {"pass"}


def test_to_frame_has_one_line_per_row(draft: CheckReport) -> None:
    frame = draft.to_frame()
    assert list(frame.columns) == [
        "id",
        "section",
        "title",
        "spec",
        "verdict",
        "security",
        "detail",
    ]
    assert len(frame) == len(CONTRACT_IDS)
    assert set(frame["verdict"]) <= set(VERDICTS)
