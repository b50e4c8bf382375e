"""``authzkit check --dialect authzen`` against Cerbos 0.55.0, a PDP nobody here wrote: every
certification row it offers holds except the deviations Cerbos has (each named with what
Cerbos does), and its missing search API is "not offered", never a pass."""

from __future__ import annotations

import pytest

from authzkit.check import output
from authzkit.check.authzen.runner import run_authzen_checks
from authzkit.check.results import CheckReport

from support.cerbos import CerbosPdp

# What Cerbos 0.55.0 does that the certification scenario does not allow, by row, with the
# words of the row's detail that show it.
CERBOS_DEVIATIONS = {
    "authzen.c-2-2-6": "decision True; got False",  # action.properties never reach policies
    "authzen.c-2-2-9": "expected HTTP 200; got HTTP 400",  # unknown members refused
    "authzen.c-5": "unknown field",  # the same, seen as a transport rule
    "authzen.c-2-4": "text/plain body",  # a text/plain body is evaluated
    "authzen.c-2-5": "echoed; got none",  # no X-Request-ID in answers
    "authzen.c-3-4": "got HTTP 400",  # a bad item fails the whole batch
}


@pytest.fixture(scope="module")
def report(cerbos: CerbosPdp) -> CheckReport:
    return run_authzen_checks(cerbos.base_url, corpora=["todo"])


def test_every_offered_row_holds_but_cerbos_deviations(report: CheckReport) -> None:
    verdicts = {r.id: r.verdict for r in report.rows if r.id.startswith("authzen.")}
    passed = {i for i, v in verdicts.items() if v == "pass"}
    assert {i for i, v in verdicts.items() if v == "fail"} == set(CERBOS_DEVIATIONS)
    for row_id, words in CERBOS_DEVIATIONS.items():
        assert words in report.row(row_id).detail, report.row(row_id).detail
    assert {"authzen.c-2-2-1", "authzen.c-3-2-7", "authzen.c-6"} <= passed
    assert "skip" not in verdicts.values()


def test_search_rows_are_not_offered_and_said_so(report: CheckReport) -> None:
    searched = {r.id: r for r in report.rows if r.id.startswith("authzen.c-4-")}
    assert len(searched) == 14
    assert {r.verdict for r in searched.values()} == {"not-offered"}
    assert "names no search_subject_endpoint" in searched["authzen.c-4-2-1"].detail
    assert report.summary["not-offered"] == 14
    table = output.terminal(report)
    assert "14 not-offered" in table.splitlines()[-1]
    assert "n/o   authzen.c-4-2-1" in table
    assert report.exit_code == 1  # Cerbos's deviations fail; not-offered rows never pass


def test_each_row_keeps_its_exchanges_as_evidence(report: CheckReport) -> None:
    row = report.row("authzen.c-2-4")
    assert len(row.evidence) == 13
    assert all(e.url.endswith("/access/v1/evaluation") for e in row.evidence)
    assert any("text/plain" in e.curl for e in row.evidence)
