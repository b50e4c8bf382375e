"""Settings from AUTHZKIT_* and .env: defaults, validation with clear messages, no leaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from authzkit.client import credentials as client_credentials
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError
from authzkit.wire.variables import default_client_auth

REAL = {
    "AUTHZKIT_BASE_URL": "https://authz.example.test/",
    "AUTHZKIT_CLIENT_ID": "rs-client",
    "AUTHZKIT_CLIENT_SECRET": "s3cr3t-value-for-tests",
}


def test_nothing_set_means_sandbox(tmp_path: Path) -> None:
    settings = Settings.from_env({}, dotenv=tmp_path / ".env")
    assert settings.uses_sandbox
    assert settings.base_url is None and settings.client_secret is None


def test_real_environment_auth_url_defaults_to_base_url(tmp_path: Path) -> None:
    settings = Settings.from_env(REAL, dotenv=tmp_path / ".env")
    assert not settings.uses_sandbox
    assert settings.base_url == settings.auth_url == "https://authz.example.test"
    assert settings.client_secret is not None
    assert settings.client_secret.reveal() == "s3cr3t-value-for-tests"


def test_secret_never_in_repr(tmp_path: Path) -> None:
    env = {**REAL, "AUTHZKIT_ANSWER_PIN": "4321", "AUTHZKIT_SUBJECT_TOKEN": "subject-jwt-xyz"}
    text = repr(Settings.from_env(env, dotenv=tmp_path / ".env"))
    for secret in ("s3cr3t-value-for-tests", "4321", "subject-jwt-xyz"):
        assert secret not in text


def test_answers_are_read_by_kind(tmp_path: Path) -> None:
    settings = Settings.from_env({"AUTHZKIT_ANSWER_PIN": "4321"}, dotenv=tmp_path / ".env")
    assert {k: v.reveal() for k, v in settings.answers.items()} == {"pin": "4321"}


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"AUTHZKIT_BASE_URL": "authz.example.test"}, "AUTHZKIT_BASE_URL"),
        ({**REAL, "AUTHZKIT_AUTH_URL": "ftp://x"}, "AUTHZKIT_AUTH_URL"),
        ({"AUTHZKIT_BASE_URL": "https://x", "AUTHZKIT_CLIENT_SECRET": "s"}, "AUTHZKIT_CLIENT_ID"),
        ({**REAL, "AUTHZKIT_TIMEOUT": "soon"}, "AUTHZKIT_TIMEOUT"),
        ({**REAL, "AUTHZKIT_TIMEOUT": "0"}, "AUTHZKIT_TIMEOUT"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], named: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=named):
        Settings.from_env(env, dotenv=tmp_path / ".env")


def test_dotenv_fills_gaps_and_environment_wins(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "# comment\nexport AUTHZKIT_BASE_URL='https://from-dotenv.test'\n"
        'AUTHZKIT_CLIENT_ID=dotenv-id\nAUTHZKIT_CLIENT_SECRET="dotenv-secret"\n'
        "AUTHZKIT_TIMEOUT=3\n"
    )
    settings = Settings.from_env({"AUTHZKIT_CLIENT_ID": "env-id"}, dotenv=dotenv)
    assert settings.base_url == "https://from-dotenv.test"
    assert settings.client_id == "env-id"
    assert settings.timeout == 3.0


def test_broken_dotenv_line_is_named(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("AUTHZKIT_CLIENT_ID=x\nthis line is wrong\n")
    with pytest.raises(ConfigError, match=r"\.env:2"):
        Settings.from_env({}, dotenv=dotenv)


# -- the token endpoint of the published dialect ----------------------------------------------


def test_token_settings_default_to_the_draft(tmp_path: Path) -> None:
    settings = Settings.from_env(REAL, dotenv=tmp_path / ".env")
    assert (
        settings.issuer,
        settings.token_url,
        settings.client_auth,
        settings.client_key_file,
    ) == (None, None, "draft", None)
    assert settings.effective_client_auth == "draft"


@pytest.mark.parametrize("issuer", [None, "https://i"])
@pytest.mark.parametrize("key_file", [None, "client.pem"])
@pytest.mark.parametrize("client_auth", ["draft", "client_secret_basic"])
def test_settings_and_the_client_resolve_client_auth_by_one_rule(
    issuer: str | None, key_file: str | None, client_auth: str
) -> None:
    """The variables' default client authentication is the client's own rule, asked of the
    wire layer by both (a key file given is a client key given)."""
    settings = Settings(issuer=issuer, client_auth=client_auth, client_key_file=key_file)
    assert settings.effective_client_auth == default_client_auth(
        client_auth, issuer=issuer, token_url=None, client_key=key_file
    )
    assert client_credentials.default_client_auth is default_client_auth


def test_a_key_file_makes_the_secret_optional(tmp_path: Path) -> None:
    env = {
        "AUTHZKIT_BASE_URL": "https://authz.example.test",
        "AUTHZKIT_CLIENT_ID": "rs-client",
        "AUTHZKIT_ISSUER": "https://accounts.example.test/auth/realms/x/",
        "AUTHZKIT_CLIENT_KEY_FILE": str(tmp_path / "client.pem"),
    }
    settings = Settings.from_env(env, dotenv=tmp_path / ".env")
    assert settings.issuer == "https://accounts.example.test/auth/realms/x/"  # exactly as given
    assert settings.effective_client_auth == "private_key_jwt"
    assert settings.client_secret is None


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (
            {"AUTHZKIT_CLIENT_AUTH": "mtls"},
            "AUTHZKIT_CLIENT_AUTH must be one of draft, client_secret_post",
        ),
        (
            {"AUTHZKIT_CLIENT_AUTH": "private_key_jwt", "AUTHZKIT_ISSUER": "https://i"},
            "AUTHZKIT_CLIENT_KEY_FILE is not set",
        ),
        ({"AUTHZKIT_CLIENT_AUTH": "client_secret_basic"}, "AUTHZKIT_ISSUER or AUTHZKIT_TOKEN_URL"),
        ({"AUTHZKIT_ISSUER": "accounts.example"}, "AUTHZKIT_ISSUER must be an http"),
        ({"AUTHZKIT_TOKEN_URL": "ftp://x/token"}, "AUTHZKIT_TOKEN_URL must be an http"),
    ],
)
def test_bad_token_settings_name_the_variable(
    extra: dict[str, str], named: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=named):
        Settings.from_env({**REAL, **extra}, dotenv=tmp_path / ".env")


def test_private_key_jwt_without_secret_needs_the_key_file(tmp_path: Path) -> None:
    env = {
        "AUTHZKIT_BASE_URL": "https://x",
        "AUTHZKIT_CLIENT_ID": "id",
        "AUTHZKIT_TOKEN_URL": "https://x/token",
    }
    with pytest.raises(ConfigError, match="AUTHZKIT_CLIENT_SECRET is not"):
        Settings.from_env(env, dotenv=tmp_path / ".env")  # client_secret_post by default


def test_an_unusable_key_file_is_named(tmp_path: Path) -> None:
    key_file = tmp_path / "client.pem"
    key_file.write_text("-----BEGIN EC PRIVATE KEY-----\nxyz\n-----END EC PRIVATE KEY-----\n")
    settings = Settings.from_env(
        {**REAL, "AUTHZKIT_ISSUER": "https://i", "AUTHZKIT_CLIENT_KEY_FILE": str(key_file)},
        dotenv=tmp_path / ".env",
    )
    with pytest.raises(ConfigError, match="AUTHZKIT_CLIENT_KEY_FILE"):
        settings.token_options()
    missing = Settings.from_env(
        {
            **REAL,
            "AUTHZKIT_ISSUER": "https://i",
            "AUTHZKIT_CLIENT_KEY_FILE": str(tmp_path / "absent.pem"),
        },
        dotenv=tmp_path / ".env",
    )
    with pytest.raises(ConfigError, match="AUTHZKIT_CLIENT_KEY_FILE: cannot read"):
        missing.token_options()


# -- which action: option > AUTHZKIT_*_ACTION > the sandbox's demo action (sandbox only) ------


def test_an_option_wins_over_the_variable_which_wins_over_the_demo_action(tmp_path: Path) -> None:
    sandbox = Settings.from_env(
        {"AUTHZKIT_CHALLENGE_ACTION": "approve_payment"}, dotenv=tmp_path / ".env"
    )
    assert sandbox.action("plain") == "show_account_balance_public"  # the demo name
    assert sandbox.action("challenge") == "approve_payment"
    assert sandbox.action("challenge", "close_account") == "close_account"
    chosen = sandbox.with_actions(challenge="close_account", plain="  ")
    assert (chosen.action("challenge"), chosen.action("plain")) == (
        "close_account",
        "show_account_balance_public",
    )


def test_a_real_environment_never_gets_a_demo_action(tmp_path: Path) -> None:
    real = Settings.from_env(
        {**REAL, "AUTHZKIT_PLAIN_ACTION": "view_balance"}, dotenv=tmp_path / ".env"
    )
    assert real.action("plain") == "view_balance"
    assert real.chosen_action("challenge") is None
    with pytest.raises(ConfigError) as caught:
        real.action("challenge")
    message = str(caught.value)
    assert "--challenge-action" in message and "AUTHZKIT_CHALLENGE_ACTION" in message
    assert "transfer_funds" in message and "authz.example.test" in message
    # A locust process reaching an authzkit sandbox through AUTHZKIT_BASE_URL says so.
    assert real.action("challenge", sandbox=True) == "transfer_funds"
    assert real.with_actions(challenge="approve").action("challenge") == "approve"


def test_an_unknown_action_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="plain, challenge"):
        Settings().action("solution")
