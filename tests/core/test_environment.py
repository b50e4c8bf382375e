"""connect(): the same Environment on the embedded sandbox and on a configured service."""

from __future__ import annotations

from pathlib import Path

import pytest

from authzkit.config import Settings
from authzkit.environment import Environment, connect
from authzkit.errors import ConfigError
from authzkit.outcomes import Authorized
from authzkit.sandbox import Sandbox


def real_settings(sandbox: Sandbox, tmp_path: Path, **extra: str) -> Settings:
    """Settings as a user would write them for a real environment, aimed at the sandbox."""
    env = {"AUTHZKIT_BASE_URL": sandbox.base_url, "AUTHZKIT_CLIENT_ID": sandbox.client_id,
           "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret, **extra}
    return Settings.from_env(env, dotenv=tmp_path / ".env")


def test_no_settings_starts_and_stops_an_embedded_sandbox(tmp_path: Path) -> None:
    with connect(Settings.from_env({}, dotenv=tmp_path / ".env"), key_size=2048) as env:
        assert env.is_sandbox and env.sandbox is not None
        sandbox = env.sandbox
        resource_id, resource_type = env.resource("bob")
        outcome = env.client.authorize("show_account_balance_public", resource_id=resource_id,
                                       resource_type=resource_type,
                                       subject_token=env.subject_token("bob"))
        assert isinstance(outcome, Authorized)
        assert set(env.answers("bob")) == {"pin", "login_password", "totp_secret"}
        assert "totp_secret" not in repr(env.answers("bob").values())
    assert not sandbox.running


def test_real_environment_mode_uses_the_configured_service(sandbox: Sandbox,
                                                           tmp_path: Path) -> None:
    token = sandbox.session_token("alice")
    resource_id = next(r.id for r in sandbox.world.resources.values() if r.owner == "alice")
    settings = real_settings(sandbox, tmp_path, AUTHZKIT_SUBJECT_TOKEN=token,
                             AUTHZKIT_RESOURCE_ID=resource_id, AUTHZKIT_ANSWER_PIN="1234")
    with connect(settings) as env:
        assert not env.is_sandbox and env.sandbox is None
        assert env.subject_token() == token
        assert env.resource() == (resource_id, "srn:resource:account")
        assert {k: v.reveal() for k, v in env.answers().items()} == {"pin": "1234"}
        outcome = env.client.authorize("show_account_balance_public", resource_id=resource_id,
                                       subject_token=env.subject_token())
        assert outcome.authorized
    assert sandbox.running  # a real environment is never stopped by us


def test_real_environment_says_which_variable_is_missing(sandbox: Sandbox,
                                                         tmp_path: Path) -> None:
    with connect(real_settings(sandbox, tmp_path)) as env:
        with pytest.raises(ConfigError, match="AUTHZKIT_SUBJECT_TOKEN"):
            env.subject_token()
        with pytest.raises(ConfigError, match="AUTHZKIT_RESOURCE_ID"):
            env.resource()
        with pytest.raises(ConfigError, match="no sandbox world"):
            env.world()


def test_unknown_sandbox_subject_is_named(tmp_path: Path) -> None:
    with connect(Settings.from_env({}, dotenv=tmp_path / ".env"), key_size=2048) as env:
        with pytest.raises(ConfigError, match=r"'mallory'.*alice"):
            env.subject_token("mallory")
        assert isinstance(env, Environment)
        assert "secret" not in repr(env)
