"""``authzkit trace``: Markdown with a sequence diagram and curl commands, and no secret."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from authzkit.cli import main
from authzkit.shared.flows import ERROR_FLOWS

from support.leaks import shows

pytestmark = pytest.mark.usefixtures("no_authzkit_env")
# Every JWT and JWE starts with a base64url JSON header: '{"' encodes as 'eyJ'.
JWT_OR_JWE = re.compile(r"eyJ[\w-]{8,}\.[\w-]+\.")


def assert_safe(document: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert not shows(secret, document)
    assert not JWT_OR_JWE.search(document), JWT_OR_JWE.search(document)


def test_challenge_trace_documents_the_round_trip(tmp_path: Path, world_secrets: list[str]) -> None:
    out = tmp_path / "traces" / "challenge.md"
    assert main(["trace", "challenge", "--key-size", "2048", "--out", str(out)]) == 0
    document = out.read_text()
    assert "```mermaid\nsequenceDiagram" in document
    assert "Authorization-->>RS: 403 srn:error:challenge_required" in document
    assert "Authorization-->>RS: 200 authorized" in document
    assert document.count("curl -sS -X POST") >= 3
    for field in (
        "request_hash",
        "user_agent",
        "user_ip",
        "challenge_solution",
        "resource_type",
        "$SUBJECT_TOKEN",
        "$CHALLENGE_SOLUTION",
    ):
        assert field in document
    assert_safe(document, world_secrets)


@pytest.mark.parametrize("flow", ERROR_FLOWS)
def test_each_error_flow_shows_its_type(
    flow: str, capsys: pytest.CaptureFixture[str], world_secrets: list[str]
) -> None:
    assert main(["trace", flow, "--key-size", "2048", "--out", "-"]) == 0
    document = capsys.readouterr().out
    assert f"srn:error:{flow}" in document
    assert_safe(document, world_secrets)


def test_unknown_flow_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["trace", "nonsense"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


def test_the_published_dialect_traces_its_oidc_token_call(
    tmp_path: Path, world_secrets: list[str]
) -> None:
    out = tmp_path / "published.md"
    assert (
        main(
            [
                "trace",
                "challenge",
                "--dialect",
                "published",
                "--key-size",
                "2048",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    document = out.read_text()
    assert "/auth/realms/authzkit/.well-known/openid-configuration" in document
    assert "/auth/realms/authzkit/protocol/openid-connect/token" in document
    # the form-encoded client credentials, replayable once the assertion is exported
    assert "--data-urlencode 'grant_type=client_credentials'" in document
    assert "--data-urlencode 'client_assertion='\"$CLIENT_ASSERTION\"" in document
    assert "Authorization-->>RS: 403 srn:error:challenge_required" in document
    assert "Authorization-->>RS: 200 authorized" in document
    assert "PRIVATE KEY" not in document
    assert_safe(document, world_secrets)


def test_a_step_that_fails_is_an_error_exit_naming_why(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A configured environment without AUTHZKIT_RESOURCE_ID: the authorize step cannot run.
    monkeypatch.setenv("AUTHZKIT_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("AUTHZKIT_CLIENT_ID", sandbox.client_id)
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", sandbox.client_secret)
    monkeypatch.setenv("AUTHZKIT_SUBJECT_TOKEN", sandbox.session_token("alice"))
    # a real environment has no demo action: the flow's action is named or nothing is sent
    assert main(["trace", "plain", "--out", "-"]) == 2
    assert "pass --action NAME or set AUTHZKIT_PLAIN_ACTION" in capsys.readouterr().err
    assert main(["trace", "plain", "--action", "show_account_balance_public", "--out", "-"]) == 1
    captured = capsys.readouterr()
    assert "# Flow `plain`" in captured.out  # the trace is still written
    assert "step 3 (authorize show_account_balance_public) did not end as expected" in captured.err
    assert "AUTHZKIT_RESOURCE_ID" in captured.err
