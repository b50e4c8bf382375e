"""connect(): the same Connection on the embedded sandbox and on a configured service."""

from __future__ import annotations

from pathlib import Path

import pytest

from authzkit.client.outcomes import Authorized
from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.shared.connection import Connection, connect
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError


def real_settings(sandbox: Sandbox, tmp_path: Path, **extra: str) -> Settings:
    """Settings as a user would write them for a real environment, aimed at the sandbox."""
    assert sandbox.client_secret is not None, "the sandbox's client has no secret"
    variables = {
        "AUTHZKIT_BASE_URL": sandbox.base_url,
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        **extra,
    }
    return Settings.from_env(variables, dotenv=tmp_path / ".env")


def test_no_settings_starts_and_stops_an_embedded_sandbox(tmp_path: Path) -> None:
    with connect(Settings.from_env({}, dotenv=tmp_path / ".env"), key_size=2048) as connection:
        assert connection.is_sandbox and isinstance(connection.sandbox, Sandbox), (
            "no embedded sandbox"
        )
        sandbox = connection.sandbox
        resource_id, resource_type = connection.resource("bob")
        outcome = connection.client.authorize(
            "show_account_balance_public",
            resource_id=resource_id,
            resource_type=resource_type,
            subject_token=connection.subject_token("bob"),
        )
        assert isinstance(outcome, Authorized)
        assert set(connection.answers("bob")) == {"pin", "login_password", "totp_secret"}
        assert "totp_secret" not in repr(connection.answers("bob").values())
    assert not sandbox.running


def test_real_environment_mode_uses_the_configured_service(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    token = sandbox.session_token("alice")
    resource_id = next(r.id for r in sandbox.world.resources.values() if r.owner == "alice")
    settings = real_settings(
        sandbox,
        tmp_path,
        AUTHZKIT_SUBJECT_TOKEN=token,
        AUTHZKIT_RESOURCE_ID=resource_id,
        AUTHZKIT_ANSWER_PIN="1234",
    )
    with connect(settings) as connection:
        assert not connection.is_sandbox and connection.sandbox is None
        assert connection.subject_token() == token
        assert connection.resource() == (resource_id, "srn:resource:account")
        assert {k: v.reveal() for k, v in connection.answers().items()} == {"pin": "1234"}
        outcome = connection.client.authorize(
            "show_account_balance_public",
            resource_id=resource_id,
            subject_token=connection.subject_token(),
        )
        assert outcome.authorized
    assert sandbox.running  # a real environment is never stopped by us


def test_real_environment_says_which_variable_is_missing(sandbox: Sandbox, tmp_path: Path) -> None:
    with connect(real_settings(sandbox, tmp_path)) as connection:
        with pytest.raises(ConfigError, match="AUTHZKIT_SUBJECT_TOKEN"):
            connection.subject_token()
        with pytest.raises(ConfigError, match="AUTHZKIT_RESOURCE_ID"):
            connection.resource()
        with pytest.raises(ConfigError, match="no sandbox world"):
            connection.world()


def test_unknown_sandbox_subject_is_named(tmp_path: Path) -> None:
    with connect(Settings.from_env({}, dotenv=tmp_path / ".env"), key_size=2048) as connection:
        with pytest.raises(ConfigError, match=r"'mallory'.*alice"):
            connection.subject_token("mallory")
        assert isinstance(connection, Connection)
        assert "secret" not in repr(connection)


def test_the_default_subject_comes_from_the_world(tmp_path: Path) -> None:
    """A world of its own (carol alone, no demo action names): the environment acts as
    carol, and an action nothing names is refused naming the option and the variable."""
    world = World.default().to_json()
    world["subjects"] = [{"id": "carol", "credentials": {"pin": "2468"}}]
    world["resources"] = [{"id": "c-1", "type": "srn:resource:card", "owner": "carol"}]
    world["actions"] = [{"name": "read_card", "required_types": []}]
    with connect(
        Settings.from_env({}, dotenv=tmp_path / ".env"), key_size=2048, world=world
    ) as connection:
        assert connection.subject == "carol"
        assert connection.resource() == ("c-1", "srn:resource:card")
        assert {k: v.reveal() for k, v in connection.answers().items()} == {"pin": "2468"}
        with pytest.raises(ConfigError, match="--action NAME or set AUTHZKIT_PLAIN_ACTION"):
            connection.action("plain")
        outcome = connection.client.authorize(
            "read_card",
            resource_id="c-1",
            resource_type="srn:resource:card",
            subject_token=connection.subject_token(),
        )
        assert outcome.authorized


def test_explicit_variables_win_over_the_world_on_a_sandbox_too(tmp_path: Path) -> None:
    """AUTHZKIT_SUBJECT_TOKEN, AUTHZKIT_RESOURCE_ID and AUTHZKIT_ANSWER_* name who the
    flows act as on a sandbox (here one reached by its URL); a subject named in the call
    is still the world's."""
    with Sandbox(key_size=2048) as sandbox:  # announced: a sandbox by its URL alone
        _explicit_variables_win(sandbox, tmp_path)


def _explicit_variables_win(sandbox: Sandbox, tmp_path: Path) -> None:
    bob_token = sandbox.session_token("bob")
    [bob_account] = sandbox.world.owned_by("bob")
    alice_account = sandbox.world.owned_by("alice")[0]
    explicit = {
        "AUTHZKIT_BASE_URL": sandbox.base_url,
        "AUTHZKIT_SUBJECT_TOKEN": bob_token,
        "AUTHZKIT_RESOURCE_ID": bob_account.id,
        "AUTHZKIT_ANSWER_PIN": "4321",
    }
    with connect(Settings.from_env(explicit, dotenv=tmp_path / ".env")) as connection:
        assert connection.is_sandbox and connection.subject == "AUTHZKIT_SUBJECT_TOKEN"
        assert connection.subject_token() == bob_token
        assert connection.resource() == (bob_account.id, bob_account.type)
        assert connection.answers()["pin"].reveal() == "4321"
        outcome = connection.client.authorize_with_challenge(
            "transfer_funds",
            answers=connection.answers(),
            resource_id=connection.resource()[0],
            subject_token=connection.subject_token(),
        )
        assert outcome.authorized
        assert connection.subject_token("alice") != bob_token  # a named subject: minted
        assert connection.resource("alice") == (alice_account.id, alice_account.type)
        assert connection.answers("alice")["pin"].reveal() == "1234"
    with connect(
        Settings.from_env({"AUTHZKIT_BASE_URL": sandbox.base_url}, dotenv=tmp_path / ".env")
    ) as connection:
        assert connection.subject == "alice"  # the default world's first subject owning a resource
        assert connection.resource() == (alice_account.id, alice_account.type)


class _PublishedSandbox:
    """Stands in for ``Sandbox(dialect="published")``: a fake service in that dialect."""

    made: list[_PublishedSandbox] = []

    def __init__(self, **options: object) -> None:
        from support.fake_service import FakeService, PublishedService, client_key

        self.options = options
        self.service = PublishedService(FakeService().start())
        self.dialect = options.get("dialect", "draft")
        self.base_url = self.auth_url = self.service.fake.base_url
        self.issuer = self.service.issuer
        self.client_id = PublishedService.CLIENT_ID
        self.client_secret = "not-used-by-private-key-jwt"
        self.client_key_pem = client_key().private_pem()
        self.running = False
        _PublishedSandbox.made.append(self)

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False
        self.service.fake.stop()


def test_a_published_sandbox_is_reached_through_its_issuer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import authzkit.sandbox

    monkeypatch.setattr(authzkit.sandbox, "Sandbox", _PublishedSandbox)
    with connect(
        Settings.from_env({}, dotenv=tmp_path / ".env"), dialect="published", key_size=2048
    ) as connection:
        sandbox = _PublishedSandbox.made[-1]
        assert sandbox.options == {"dialect": "published", "key_size": 2048}
        provider = connection.client.token_provider
        assert (provider.issuer, provider.client_auth) == (sandbox.issuer, "private_key_jwt")
        outcome = connection.client.authorize(
            "show_account_balance_public", resource_id="r", subject_token="a-subject-session-token"
        )
        assert isinstance(outcome, Authorized) and outcome.response is None
        assert sandbox.service.auth_methods == ["private_key_jwt"]
        assert sandbox.service.assertions[0]["aud"] == sandbox.issuer
    assert not sandbox.running


def test_connect_to_a_published_sandbox(tmp_path: Path) -> None:
    with connect(
        Settings.from_env({}, dotenv=tmp_path / ".env"), dialect="published", key_size=2048
    ) as connection:
        assert isinstance(connection.sandbox, Sandbox), "no embedded sandbox"
        assert connection.sandbox.dialect == "published"
        provider = connection.client.token_provider
        assert (provider.issuer, provider.client_auth) == (
            connection.sandbox.issuer,
            "private_key_jwt",
        )
        resource_id, _ = connection.resource("alice")
        outcome = connection.client.authorize_with_challenge(
            "transfer_funds",
            answers=connection.answers("alice"),
            resource_id=resource_id,
            subject_token=connection.subject_token("alice"),
        )
        assert outcome.authorized and provider.token_url == connection.sandbox.token_url
        assert connection.sandbox.stats()["tokens_issued"] == 1
