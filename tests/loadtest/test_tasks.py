"""The users' flows in-process (no locust): against the session's embedded sandbox, with a
plain requests session and a recording stand-in for Locust's request event."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from authzkit.client.discovery import KeyCache
from authzkit.client.token import TokenProvider
from authzkit.client.transport import RequestsTransport
from authzkit.loadtest.record.context import ProcessState, build_process_state
from authzkit.loadtest.record.subjects import LoadSubject
from authzkit.loadtest.record.summary import build_summary
from authzkit.loadtest.record.tasks import FLOW_ROW, JWE_ROW, UNEXPECTED_ROW, UserTasks
from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret
from authzkit.wire.spec import AUTHORIZE_PATH

from support.fake_service import AUTHORIZE, FakeService, PublishedService, Reply, client_key


def options(**overrides: Any) -> SimpleNamespace:
    values = {
        "auth_url": "",
        "client_id": "",
        "client_secret": "",
        "subjects": "",
        "action": "show_account_balance_public",
        "challenge_action": "transfer_funds",
        "wait_time": "0",
    }
    return SimpleNamespace(**{**values, **overrides})


class Rows:
    """Records what the flows fire, as Locust's request event would receive it."""

    def __init__(self) -> None:
        self.fired: list[dict[str, Any]] = []

    def __call__(self, **event: Any) -> None:
        self.fired.append(event)

    def named(self, row: tuple[str, str]) -> list[dict[str, Any]]:
        return [e for e in self.fired if (e["request_type"], e["name"]) == row]


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    for name in (
        "AUTHZKIT_BASE_URL",
        "AUTHZKIT_AUTH_URL",
        "AUTHZKIT_CLIENT_ID",
        "AUTHZKIT_CLIENT_SECRET",
        "AUTHZKIT_ISSUER",
        "AUTHZKIT_TOKEN_URL",
        "AUTHZKIT_CLIENT_AUTH",
        "AUTHZKIT_CLIENT_KEY_FILE",
    ):
        monkeypatch.delenv(name, raising=False)


def flows_for(state: ProcessState, rows: Rows, number: int = 0) -> UserTasks:
    return UserTasks(state, session=requests.Session(), number=number, fire=rows)


def test_shared_state_from_a_sandbox_world(sandbox: Sandbox, no_env: None) -> None:
    state = build_process_state(options(wait_time="0.5-2"), sandbox.base_url)
    assert state.sandbox and state.wait == (0.5, 2.0)
    assert state.token_provider.client_id == sandbox.client_id
    assert state.token_provider.client_auth == "draft"  # a draft sandbox has no issuer
    assert {s.label for s in state.subjects} == {"alice", "bob"}
    assert state.subjects[0].token.reveal() not in repr(state.subjects[0])


def test_plain_and_challenge_flows_share_one_provider(sandbox: Sandbox, no_env: None) -> None:
    state = build_process_state(options(), sandbox.base_url)
    rows = Rows()
    users = [flows_for(state, rows, n) for n in range(3)]
    for user in users:
        user.authorize_once()
        user.challenge_round_trip()
    assert rows.named(UNEXPECTED_ROW) == []
    flows = rows.named(FLOW_ROW)
    assert len(flows) == 3 and all(e["exception"] is None for e in flows)
    assert len(rows.named(JWE_ROW)) == 3
    assert state.token_provider.token_calls == 1 and state.keys.fetches == 1
    assert {u.subject.label for u in users} == {"alice", "bob"}  # round robin over subjects


def test_rotated_keys_cost_one_refetch_not_a_failure(sandbox: Sandbox, no_env: None) -> None:
    state = build_process_state(options(), sandbox.base_url)
    rows = Rows()
    user = flows_for(state, rows)
    user.challenge_round_trip()
    sandbox.rotate_keys()
    user.challenge_round_trip()
    assert [e["exception"] for e in rows.named(FLOW_ROW)] == [None, None]
    assert state.keys.fetches == 2


class RecordingSession(requests.Session):
    """A requests session that keeps what each request sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[Any, ...]] = []

    def request(
        self,
        method: str | bytes,
        url: str | bytes,
        *args: Any,
        **kwargs: Any,
    ) -> requests.Response:
        self.sent.append((method, url, kwargs.get("data"), dict(kwargs.get("headers") or {})))
        return super().request(method, url, *args, **kwargs)


def test_the_plain_call_sends_what_client_authorize_sends(sandbox: Sandbox, no_env: None) -> None:
    state = build_process_state(options(), sandbox.base_url)
    session, rows = RecordingSession(), Rows()
    user = UserTasks(state, session=session, number=7, fire=rows)
    user.authorize_once()
    assert user.client.authorize(state.action, **user.request).authorized
    sent = [s for s in session.sent if str(s[1]).endswith(AUTHORIZE_PATH)]
    assert len(sent) == 2 and sent[0] == sent[1]  # same URL, body bytes and headers
    assert rows.fired == []


def test_an_expired_access_token_is_replaced_and_the_call_sent_again(
    short_token_published_fake: PublishedService, no_env: None, tmp_path: Path
) -> None:
    state = build_process_state(
        options(
            subjects=_subjects_csv(tmp_path, "subject-session-token"),
            client_id=short_token_published_fake.CLIENT_ID,
            client_secret=short_token_published_fake.CLIENT_SECRET,
            token_url=short_token_published_fake.token_endpoint,
            client_auth="client_secret_post",
        ),
        short_token_published_fake.fake.base_url,
    )
    rows = Rows()
    user = flows_for(state, rows)
    user.authorize_once()
    short_token_published_fake.expire_tokens()
    user.authorize_once()
    assert short_token_published_fake.token_calls == 2  # one refresh after the 401
    assert len(short_token_published_fake.fake.requests[AUTHORIZE]) == 3  # and one resend
    assert rows.fired == []


def test_unexpected_outcomes_fail_with_the_service_type(sandbox: Sandbox, no_env: None) -> None:
    state = build_process_state(
        options(action="transfer_funds", challenge_action="show_account_balance_public"),
        sandbox.base_url,
    )
    rows = Rows()
    user = flows_for(state, rows)
    user.authorize_once()
    user.challenge_round_trip()
    assert "srn:error:challenge_required" in str(rows.named(UNEXPECTED_ROW)[0]["exception"])
    assert "expected srn:error:challenge_required" in str(rows.named(FLOW_ROW)[0]["exception"])


def test_a_wrong_answer_fails_the_flow_with_its_type(
    sandbox: Sandbox, no_env: None, tmp_path: Path
) -> None:
    resource = next(r for r in sandbox.world.to_json()["resources"] if r["owner"] == "alice")
    subjects = tmp_path / "subjects.csv"
    subjects.write_text(
        f"subject_token,resource_id,pin\n{sandbox.session_token('alice')},{resource['id']},0000\n"
    )
    state = build_process_state(
        options(
            subjects=str(subjects), client_id=sandbox.client_id, client_secret=sandbox.client_secret
        ),
        sandbox.base_url,
    )
    assert not state.sandbox  # subjects and credentials given: the world is never read
    rows = Rows()
    flows_for(state, rows).challenge_round_trip()
    assert str(rows.named(FLOW_ROW)[0]["exception"]) == (
        "HTTP 403 srn:error:bad_challenge_solution"
    )


def test_no_url_is_a_clear_error(no_env: None) -> None:
    with pytest.raises(ConfigError, match="pass --host or set AUTHZKIT_BASE_URL"):
        build_process_state(options(), None)


def test_build_summary_sums_processes_and_counts_401s() -> None:
    errors = [
        {
            "type": "POST",
            "name": "authorize",
            "occurrences": 3,
            "error": "RequestFailure('HTTP 401 srn:error:invalid_token')",
        }
    ]
    summary = build_summary(
        requests=100,
        failures=3,
        p95_ms=12,
        errors=errors,
        counters=[{"token_calls": 2, "refreshes": 1}, {"token_calls": 3, "refreshes": 2}],
        max_p95_ms=None,
        max_failure_ratio=0.01,
    )
    assert summary["token_provider"] == {
        "token_calls": 5,
        "refreshes": 3,
        "processes": 2,
        "rejected_401": 3,
    }
    assert summary["thresholds"]["checked"] and not summary["thresholds"]["passed"]


# -- the published dialect: OAuth 2.0 token endpoint, bare 401s ---------------------------------


@pytest.fixture
def short_token_published_fake() -> Iterator[PublishedService]:
    fake = FakeService().start()
    try:
        yield PublishedService(fake, expires_in=60)
    finally:
        fake.stop()


def _subjects_csv(tmp_path: Path, token: str) -> str:
    path = tmp_path / "subjects.csv"
    path.write_text(f"subject_token,resource_id,pin\n{token},acc-1,1234\n")
    return str(path)


@pytest.mark.parametrize("client_auth", ["client_secret_post", "client_secret_basic"])
def test_token_options_reach_the_shared_provider(
    short_token_published_fake: PublishedService, no_env: None, tmp_path: Path, client_auth: str
) -> None:
    state = build_process_state(
        options(
            subjects=_subjects_csv(tmp_path, "subject-session-token"),
            client_id=short_token_published_fake.CLIENT_ID,
            client_secret=short_token_published_fake.CLIENT_SECRET,
            token_url=short_token_published_fake.token_endpoint,
            client_auth=client_auth,
        ),
        short_token_published_fake.fake.base_url,
    )
    assert not state.sandbox and state.token_provider.client_auth == client_auth
    rows = Rows()
    flows_for(state, rows).authorize_once()
    assert rows.fired == [] and short_token_published_fake.auth_methods == [client_auth]


def test_private_key_jwt_from_a_key_file_and_an_issuer(
    short_token_published_fake: PublishedService, no_env: None, tmp_path: Path
) -> None:
    key_file = tmp_path / "client.pem"
    key_file.write_text(client_key().private_pem())
    state = build_process_state(
        options(
            subjects=_subjects_csv(tmp_path, "subject-session-token"),
            client_id=short_token_published_fake.CLIENT_ID,
            client_key_file=str(key_file),
            issuer=short_token_published_fake.issuer,
        ),
        short_token_published_fake.fake.base_url,
    )
    assert state.token_provider.client_auth == "private_key_jwt"  # the default with a key
    flows_for(state, Rows()).authorize_once()
    assert short_token_published_fake.assertions[0]["aud"] == short_token_published_fake.issuer


def test_a_bad_client_key_file_is_named(
    short_token_published_fake: PublishedService, no_env: None, tmp_path: Path
) -> None:
    key_file = tmp_path / "client.pem"
    key_file.write_text("not a key")
    with pytest.raises(ConfigError, match="--client-key-file"):
        build_process_state(
            options(
                subjects=_subjects_csv(tmp_path, "t"),
                client_id="c",
                client_key_file=str(key_file),
                issuer=short_token_published_fake.issuer,
            ),
            short_token_published_fake.fake.base_url,
        )


def test_a_published_sandbox_world_gives_issuer_and_demo_key(
    short_token_published_fake: PublishedService, no_env: None
) -> None:
    world = World.default().to_json()
    demo = next(c for c in world["clients"] if c["resource_server"])
    demo.update(
        client_id=short_token_published_fake.CLIENT_ID, client_key_pem=client_key().private_pem()
    )
    short_token_published_fake.fake.script(
        "/sandbox/v1/world", Reply(200, {**world, "issuer": short_token_published_fake.issuer})
    )
    short_token_published_fake.fake.script(
        "/sandbox/v1/sessions", Reply(200, {"token": "minted-session", "expires_in": 86400})
    )
    state = build_process_state(options(), short_token_published_fake.fake.base_url)
    assert state.sandbox and state.token_provider.issuer == short_token_published_fake.issuer
    assert state.token_provider.client_auth == "private_key_jwt"
    flows_for(state, Rows()).authorize_once()
    assert short_token_published_fake.auth_methods == ["private_key_jwt"]


USERS = 50
LIFETIMES = 3


def test_50_users_sharing_an_invalid_subject_refresh_once_per_lifetime(
    short_token_published_fake: PublishedService,
) -> None:
    """The issue's load case in-process: 50 users, one invalid subject, bare 401s, three
    token lifetimes: token calls <= lifetimes + 1, not one per request."""
    clock = ManualClock()
    transport = RequestsTransport(requests.Session(), timeout=5)
    provider = TokenProvider(
        client_id=short_token_published_fake.CLIENT_ID,
        issuer=short_token_published_fake.issuer,
        client_key=client_key().private_pem(),
        clock=clock,
        transport=transport,
    )
    short_token_published_fake.invalid_subjects.add("revoked-subject-session")
    state = ProcessState(
        base_url=short_token_published_fake.fake.base_url,
        auth_url=short_token_published_fake.fake.base_url,
        timeout=5,
        token_provider=provider,
        keys=KeyCache(
            base_url=short_token_published_fake.fake.base_url,
            transport=transport,
            token_provider=provider,
        ),
        subjects=(LoadSubject(token=Secret("revoked-subject-session"), resource_id="acc-1"),),
        action="show_account_balance_public",
        challenge_action="transfer_funds",
        wait=(0.0, 0.0),
        sandbox=False,
    )
    users = [flows_for(state, Rows(), n) for n in range(USERS)]

    def calls(user: UserTasks, barrier: threading.Barrier) -> None:
        barrier.wait()
        for _ in range(3):
            user.authorize_once()

    for _ in range(LIFETIMES):
        barrier = threading.Barrier(USERS)
        threads = [threading.Thread(target=calls, args=(u, barrier)) for u in users]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        clock.advance(60)  # the token's whole lifetime: the next round needs a new one
    requests_sent = len(short_token_published_fake.fake.requests[AUTHORIZE])
    assert requests_sent >= USERS * 3 * LIFETIMES
    assert LIFETIMES <= short_token_published_fake.token_calls <= LIFETIMES + 1
    assert provider.sessions.is_invalid(provider.sessions.key("revoked-subject-session"))


def test_a_published_sandbox_over_http(published_sandbox: Sandbox, no_env: None) -> None:
    """Only --host: the world's demo key and the sandbox's realm give private_key_jwt."""
    state = build_process_state(options(), published_sandbox.base_url)
    provider = state.token_provider
    assert (provider.issuer, provider.client_auth) == (published_sandbox.issuer, "private_key_jwt")
    rows = Rows()
    user = flows_for(state, rows)
    user.authorize_once()
    user.challenge_round_trip()
    assert rows.named(UNEXPECTED_ROW) == []
    assert [e["exception"] for e in rows.named(FLOW_ROW)] == [None]
    assert published_sandbox.stats()["tokens_issued"] == 1
