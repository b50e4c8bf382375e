"""The record of exchanges (`Recorder`, authzkit.client.exchanges): what it keeps, and curl
commands that really run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from authzkit.client.exchanges import Exchange, Recorder, safe_headers
from authzkit.client.facade import AuthzClient

from support.subjects import Subject


@pytest.fixture
def recorded(sandbox: Any, alice: Subject) -> tuple[Recorder, AuthzClient]:
    recorder = Recorder()
    client = AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        recorder=recorder,
    )
    client.authorize_with_challenge(
        "transfer_funds",
        answers=alice.answers(),
        resource_id=alice.resource_id,
        subject_token=alice.token,
        user_agent="recorder-test",
    )
    return recorder, client


def test_exchanges_keep_method_url_name_status_and_time(
    recorded: tuple[Recorder, Any], sandbox: Any
) -> None:
    recorder, _ = recorded
    rows = [(e.method, e.url.removeprefix(sandbox.base_url), e.name, e.status) for e in recorder]
    assert rows == [
        ("POST", "/api/v3.1/oauth/tokens", "token", 200),
        ("POST", "/resources/v1/authorization/actions/authorize", "authorize", 403),
        ("GET", "/api/v1/discovery/keys", "keys", 200),
        ("POST", "/resources/v1/authorization/actions/authorize", "authorize:solution", 200),
    ]
    assert all(e.elapsed_ms > 0 and e.started_at > 0 for e in recorder)
    challenge = recorder[1]
    assert challenge.response_body["challenge"]["required_types"] == ["pin"]
    assert challenge.request_body["subject"]["token"] == "$SUBJECT_TOKEN"
    assert challenge.request_headers["Authorization"] == "Bearer $ACCESS_TOKEN"
    assert recorder[0].request_body == {
        "clientId": sandbox.client_id,
        "clientSecret": "$AUTHZKIT_CLIENT_SECRET",
    }
    assert recorder[3].request_body["subject"]["context"]["challenge_solution"] == (
        "$CHALLENGE_SOLUTION"
    )


def test_without_a_recorder_nothing_is_wrapped(sandbox: Any) -> None:
    with AuthzClient(
        base_url=sandbox.base_url, client_id=sandbox.client_id, client_secret=sandbox.client_secret
    ) as client:
        assert type(client.transport).__name__ == "RequestsTransport"


def test_curl_quotes_secrets_as_shell_variables() -> None:
    exchange = Exchange(
        method="POST",
        url="http://h/p?a=1",
        name="token",
        status=200,
        elapsed_ms=1.0,
        started_at=0.0,
        request_headers={"Authorization": "Bearer $ACCESS_TOKEN"},
        request_body={"clientSecret": "$AUTHZKIT_CLIENT_SECRET", "it's": "ok"},
    )
    assert exchange.curl() == (
        "curl -sS -X POST 'http://h/p?a=1' -H 'Authorization: Bearer '\"$ACCESS_TOKEN\" "
        '--data \'{"clientSecret":"\'"$AUTHZKIT_CLIENT_SECRET"\'","it\'\\\'\'s":"ok"}\''
    )


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_recorded_curl_commands_run_as_pasted(
    recorded: tuple[Recorder, AuthzClient], sandbox: Any, alice: Subject
) -> None:
    recorder, client = recorded
    env = {
        **os.environ,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        "ACCESS_TOKEN": client.access_token(),
        "SUBJECT_TOKEN": alice.token,
    }

    def run(exchange: Exchange) -> Any:
        done = subprocess.run(
            ["sh", "-c", exchange.curl()],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
            check=True,
        )
        return json.loads(done.stdout)

    assert "accessToken" in run(recorder[0])
    assert run(recorder[1])["challenge"]["required_types"] == ["pin"]
    assert any(key["use"] == "enc" for key in run(recorder[2])["keys"])


def test_a_cookie_a_response_sets_is_masked_like_the_one_a_request_sends() -> None:
    """A gateway's session cookie in a response is as secret as a bearer token: an exchange
    (its repr, display and trace) keeps neither, whatever the header's case."""
    secret = "s3cr3t-session-value-0123456789"
    for name in ("Set-Cookie", "set-cookie"):
        shown = safe_headers({name: f"session={secret}; Path=/; HttpOnly", "Cookie": secret})
        assert secret not in repr(shown), shown
        assert shown["Cookie"] == "$COOKIE"
    assert safe_headers({"Content-Type": "application/json"}) == {
        "Content-Type": "application/json"
    }
