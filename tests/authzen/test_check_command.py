"""``authzkit check --dialect authzen`` as a user runs it: every row passes on the embedded
AuthZEN sandbox; a PDP at ``AUTHZKIT_BASE_URL`` is found by its metadata; a PDP without
search gets those rows as "not offered" in the table and the JSON; bad input is one line and
exit 2 before any request (in process; one sandbox or scripted PDP per test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit import Sandbox
from authzkit.check.authzen.corpora import CERTIFICATION, load
from authzkit.cli import main
from authzkit.wire.authzen import (
    ACCESS_EVALUATION_ENDPOINT,
    ACCESS_EVALUATIONS_ENDPOINT,
    EVALUATION_PATH,
    METADATA_PATH,
    metadata_document,
)

from support.cerbos import CerbosPdp
from support.fake_pdp import FakePdp

pytestmark = pytest.mark.usefixtures("no_authzkit_env")
TOKEN_PATH = "/api/v3.1/oauth/tokens"  # the draft's token endpoint, below the PDP here
PDP_TOKEN = "check-pdp-token-0123456789"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.fixture
def searchless_pdp() -> Iterator[FakePdp]:
    """A PDP whose metadata names evaluation and evaluations only (no search); it permits."""
    running = FakePdp().start()
    offered = (ACCESS_EVALUATION_ENDPOINT, ACCESS_EVALUATIONS_ENDPOINT)
    running.routes[METADATA_PATH] = lambda _: (200, metadata_document(running.base_url, offered))
    running.routes[EVALUATION_PATH] = lambda _: (200, {"decision": True})
    running.routes[TOKEN_PATH] = lambda _: (
        200,
        {"accessToken": PDP_TOKEN, "expiresIn": 900, "tokenType": "Bearer"},
    )
    try:
        yield running
    finally:
        running.stop()


def test_every_row_passes_on_the_embedded_sandbox(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "authzen.json"
    code, out, _ = _run(capsys, "check", "--dialect", "authzen", "--json", str(report))
    rows = len(load(CERTIFICATION).entries) + len(load("todo").entries)
    assert code == 0
    assert out[0].startswith("authzkit check: embedded AuthZEN sandboxes")
    assert out[-1] == f"{rows} rows: {rows} pass, 0 diff, 0 fail, 0 skip"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"] == {"pass": rows, "diff": 0, "fail": 0, "skip": 0, "not-offered": 0}
    assert data["target"]["dialect"] == "authzen" and data["target"]["corpora"] == ["todo"]
    ids = [row["id"] for row in data["rows"]]
    assert {f"authzen.{t['id']}" for t in load(CERTIFICATION).entries} <= set(ids)
    assert "interop.todo.evaluations-3" in ids
    assert all(row["evidence"] for row in data["rows"])


def test_a_pdp_at_the_url_is_found_by_its_metadata(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Sandbox(dialect="authzen") as pdp:
        monkeypatch.setenv("AUTHZKIT_BASE_URL", pdp.base_url)
        code, out, err = _run(capsys, "check", "--only", "authzen.c-2-*")
    assert code == 0, err
    assert out[0].startswith(f"authzkit check: {pdp.base_url} (sandbox, dialect authzen)")
    assert out[-1] == "13 rows: 13 pass, 0 diff, 0 fail, 0 skip"
    assert err == []  # an authzkit sandbox: no request count to confirm


def test_a_pdp_without_search_has_those_rows_not_offered(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    searchless_pdp: FakePdp,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", searchless_pdp.base_url)
    code, out, err = _run(
        capsys, "check", "--only", "authzen.c-4-*", "--json", str(tmp_path / "r.json"), "--yes"
    )
    assert code == 0  # nothing failed; nothing passed either
    assert "will send at most" in err[0]
    assert "  n/o   authzen.c-4-2-1" in "\n".join(out)
    assert out[-1] == "14 rows: 0 pass, 0 diff, 0 fail, 0 skip, 14 not-offered"
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["summary"]["not-offered"] == 14 and data["summary"]["pass"] == 0
    row = next(r for r in data["rows"] if r["id"] == "authzen.c-4-2-1")
    assert row["verdict"] == "not-offered"
    assert row["detail"].startswith("not offered: the PDP's metadata names no search_")
    assert [r.path for r in searchless_pdp.received if r.method == "POST"] == []


def test_a_configured_token_method_sends_a_bearer_token_never_shown(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    searchless_pdp: FakePdp,
    tmp_path: Path,
) -> None:
    for name, value in {
        "AUTHZKIT_BASE_URL": searchless_pdp.base_url,
        "AUTHZKIT_DIALECT": "authzen",
        "AUTHZKIT_CLIENT_ID": "pep",
        "AUTHZKIT_CLIENT_SECRET": "pep-secret-0123456789",
    }.items():
        monkeypatch.setenv(name, value)
    code, out, err = _run(
        capsys, "check", "--only", "authzen.c-2-2-1", "--json", str(tmp_path / "r.json")
    )
    assert code == 0, err
    asked = [r for r in searchless_pdp.received if r.path == EVALUATION_PATH]
    assert asked and asked[0].headers["Authorization"] == f"Bearer {PDP_TOKEN}"
    assert PDP_TOKEN not in "\n".join(out + err)
    assert PDP_TOKEN not in (tmp_path / "r.json").read_text(encoding="utf-8")


def test_a_large_check_of_a_pdp_is_not_sent_unconfirmed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, searchless_pdp: FakePdp
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", searchless_pdp.base_url)
    code, out, err = _run(capsys, "check", "--dialect", "authzen")
    assert code == 2 and out == []
    assert len(err) == 1 and "not confirmed: the check would send at most" in err[0]
    assert [r for r in searchless_pdp.received if r.method == "POST"] == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--corpus", "gateway"], "--corpus gateway: no world of the embedded sandbox"),
        (["--only", "token.*"], "--only 'token.*' matches no row"),
        (["--only", " "], "--only needs a pattern"),
        (["--action", "read"], "--action is for the draft's rows, not authzen's"),
        (["--allow-wrong-answers"], "--allow-wrong-answers is for the draft's rows"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    code, out, err = _run(capsys, "check", "--dialect", "authzen", *argv)
    assert (code, out, len(err)) == (2, [], 1)
    assert words in err[0]


def test_an_unknown_corpus_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "--dialect", "authzen", "--corpus", "nope"])
    out, err = capsys.readouterr()
    assert (exited.value.code, out, len(err.splitlines())) == (2, "", 1)
    assert "argument --corpus: invalid choice: 'nope'" in err


def test_corpus_is_refused_on_the_draft(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "check", "--corpus", "todo")
    assert code == 2 and err == [
        "authzkit check: --corpus applies to --dialect authzen (the AuthZEN interop corpora)"
    ]


def test_cerbos_on_the_command_line_says_what_it_does_not_offer(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cerbos: CerbosPdp,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", cerbos.base_url)
    code, out, _ = _run(
        capsys, "check", "--corpus", "todo", "--yes", "--json", str(tmp_path / "r.json")
    )
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert code == 1  # Cerbos's deviations from the scenario (tests/authzen/test_cerbos_check.py)
    assert out[0].startswith(f"authzkit check: {cerbos.base_url} (real environment")
    assert out[-1].endswith(", 14 not-offered")
    assert data["summary"]["not-offered"] == 14 and data["target"]["corpora"] == ["todo"]
    todo = [r["verdict"] for r in data["rows"] if r["id"].startswith("interop.todo.")]
    assert todo == ["pass"] * len(load("todo").entries)
