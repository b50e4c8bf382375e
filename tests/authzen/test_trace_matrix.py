"""``authzkit trace`` and ``authzkit matrix`` on AuthZEN as a user runs them: the embedded
sandbox's certification world (alice and bob, record-1 and record-2), a PDP at
``AUTHZKIT_BASE_URL`` with a Bearer token that never shows, and one-line refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.wire.authzen import (
    ACCESS_EVALUATION_ENDPOINT,
    ACCESS_EVALUATIONS_ENDPOINT,
    EVALUATION_PATH,
    METADATA_PATH,
    metadata_document,
)

from support.fake_pdp import FakePdp

pytestmark = pytest.mark.usefixtures("no_authzkit_env")
TOKEN_PATH = "/api/v3.1/oauth/tokens"
PDP_TOKEN = "trace-pdp-token-0123456789"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def _trace(capsys: pytest.CaptureFixture[str], flow: str, *more: str) -> str:
    code, out, err = _run(capsys, "trace", flow, "--dialect", "authzen", "--out", "-", *more)
    assert code == 0, err
    return out


def _steps(document: str) -> list[str]:
    return [line for line in document.splitlines() if line.startswith("| ") and "---" not in line][
        1:
    ]


def test_the_evaluation_flow_discovers_then_evaluates(capsys: pytest.CaptureFixture[str]) -> None:
    document = _trace(capsys, "evaluation")
    assert _steps(document) == [
        "| 1 | discover the PDP's metadata | 200 | published |",
        "| 2 | evaluation: user alice, read, record record-1 | 200 | authorized |",
    ]
    assert "GET /.well-known/authzen-configuration" in document
    assert "PDP-->>RS: 200 decision true" in document
    sent = [line for line in document.splitlines() if line.startswith("X-Request-ID: sent")]
    assert len(sent) == 2 and all("echoed" in line and "not echoed" not in line for line in sent)
    assert document.count("-H 'X-Request-ID: ") == 2  # in each curl


def test_the_evaluations_flow_is_one_batch_in_request_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _trace(capsys, "evaluations")
    assert _steps(document)[1] == (
        "| 2 | evaluations (execute_all): read, write, delete | 200 | "
        "authorized, authorized, denied |"
    )
    assert '"evaluations_semantic": "execute_all"' in document
    assert "PDP-->>RS: 200 3 decisions" in document


def test_the_search_flow_shows_every_page(capsys: pytest.CaptureFixture[str]) -> None:
    document = _trace(capsys, "search")
    assert _steps(document)[1].endswith("| 200 | record-1, record-2 |")
    pages = document.count("RS->>PDP: POST /access/v1/search/resource")
    assert pages >= 2 and '"next_token"' in document


def test_the_errors_flow_gets_the_specs_400s(capsys: pytest.CaptureFixture[str]) -> None:
    document = _trace(capsys, "errors")
    assert _steps(document)[1:] == [
        "| 2 | evaluation without a subject | 400 | 400 as the spec says |",
        "| 3 | evaluation sent as text/plain | 400 | 400 as the spec says |",
    ]
    assert "-H 'Content-Type: text/plain'" in document


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["trace", "challenge", "--dialect", "authzen"],
            "authzkit trace: the challenge flow is the draft's; on AuthZEN choose one of "
            "evaluation, evaluations, search, errors",
        ),
        (
            ["trace", "search"],
            "authzkit trace: the search flow is AuthZEN's (add --dialect authzen)",
        ),
        (
            ["trace", "evaluation", "--dialect", "authzen", "--challenge-action", "x"],
            "authzkit trace: --challenge-action: the AuthZEN flows send no challenge "
            "(drop --challenge-action)",
        ),
        (
            ["matrix", "--dialect", "authzen", "--subject", "carol"],
            "authzkit matrix: --subject: the world has no 'carol' (it has alice, bob)",
        ),
        (
            ["matrix", "--dialect", "authzen", "--resources", "record-9"],
            "authzkit matrix: --resources: the world has no 'record-9' (it has record-1, record-2)",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], line: str
) -> None:
    code, out, err = _run(
        capsys, *argv, *(["--out", str(tmp_path / "t.md")] if argv[0] == "trace" else [])
    )
    assert (code, out, err) == (2, "", [line])
    assert not (tmp_path / "t.md").exists()


def _table(out: str, subject: str) -> list[list[str]]:
    block = out.split(f"subject {subject},")[0].rsplit("action  ", 1)[1]
    return [line.split() for line in block.splitlines()[2:5]]


def test_the_matrix_shows_each_subjects_decisions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "matrix", "--dialect", "authzen")
    assert code == 0, err
    assert out.splitlines()[0].startswith("2 subject(s) x 3 action(s) x 2 resource(s)")
    assert _table(out, "alice") == [
        ["read", "authorized", "authorized"],
        ["write", "authorized", "denied"],
        ["delete", "denied", "denied"],
    ]
    assert _table(out, "bob") == [
        ["read", "authorized", "authorized"],
        ["write", "denied", "authorized"],  # bob is an admin: archived record-2 only
        ["delete", "denied", "denied"],
    ]
    assert "subject bob, 6 cells: 3 authorized, 3 denied" in out


def test_one_subject_and_some_actions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "matrix", "--dialect", "authzen", "--subject", "bob", "--actions", "write"
    )
    assert code == 0 and "subject alice" not in out
    assert "subject bob, 2 cells: 1 authorized, 1 denied" in out


@pytest.fixture
def token_pdp() -> Iterator[FakePdp]:
    """A PDP that permits, behind a token endpoint; its batches echo one decision each."""
    running = FakePdp().start()
    offered = (ACCESS_EVALUATION_ENDPOINT, ACCESS_EVALUATIONS_ENDPOINT)
    running.routes[METADATA_PATH] = lambda _: (200, metadata_document(running.base_url, offered))
    running.routes[EVALUATION_PATH] = lambda _: (200, {"decision": True})
    running.routes["/access/v1/evaluations"] = lambda body: (
        200,
        {"evaluations": [{"decision": i == 0} for i, _ in enumerate(body["evaluations"])]},
    )
    running.routes[TOKEN_PATH] = lambda _: (
        200,
        {"accessToken": PDP_TOKEN, "expiresIn": 900, "tokenType": "Bearer"},
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def pdp_env(monkeypatch: pytest.MonkeyPatch, token_pdp: FakePdp) -> FakePdp:
    for name, value in {
        "AUTHZKIT_BASE_URL": token_pdp.base_url,
        "AUTHZKIT_DIALECT": "authzen",
        "AUTHZKIT_CLIENT_ID": "pep",
        "AUTHZKIT_CLIENT_SECRET": "pep-secret-0123456789",
        "AUTHZKIT_SUBJECT_ID": "carol",
        "AUTHZKIT_RESOURCE_ID": "doc-1",
        "AUTHZKIT_RESOURCE_TYPE": "document",
        "AUTHZKIT_PLAIN_ACTION": "view",
    }.items():
        monkeypatch.setenv(name, value)
    return token_pdp


def test_a_trace_on_a_pdp_masks_its_bearer_token(
    capsys: pytest.CaptureFixture[str], pdp_env: FakePdp
) -> None:
    code, out, err = _run(capsys, "trace", "evaluation", "--out", "-")
    assert code == 0, err
    asked = [r for r in pdp_env.received if r.path == EVALUATION_PATH]
    assert asked[0].headers["Authorization"] == f"Bearer {PDP_TOKEN}"
    assert PDP_TOKEN not in out + "\n".join(err)
    assert "-H 'Authorization: Bearer '\"$ACCESS_TOKEN\"" in out
    assert "| 2 | evaluation: user carol, view, document doc-1 | 200 | authorized |" in out


def test_a_matrix_on_a_pdp_is_one_batch_for_the_configured_subject(
    capsys: pytest.CaptureFixture[str], pdp_env: FakePdp
) -> None:
    code, out, err = _run(capsys, "matrix", "--actions", "view,edit", "--resources", "doc-1,doc-2")
    assert code == 0, err
    batches = pdp_env.posted("/access/v1/evaluations")
    assert len(batches) == 1 and batches[0]["subject"] == {"type": "user", "id": "carol"}
    assert len(batches[0]["evaluations"]) == 4
    assert _table(out, "carol")[0] == ["view", "authorized", "denied"]
    assert PDP_TOKEN not in out


def test_a_matrix_on_a_pdp_names_what_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, token_pdp: FakePdp
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", token_pdp.base_url)
    monkeypatch.setenv("AUTHZKIT_DIALECT", "authzen")
    code, out, err = _run(capsys, "matrix", "--subject", "carol")
    assert (
        code == 2
        and out == ""
        and err
        == [
            "authzkit matrix: a matrix on an AuthZEN PDP needs --actions or AUTHZKIT_PLAIN_ACTION, "
            "--resources or AUTHZKIT_RESOURCE_ID, AUTHZKIT_RESOURCE_TYPE"
        ]
    )
    assert token_pdp.received == []
