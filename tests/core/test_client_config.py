"""Building a client: from settings, argument checks, and what its repr shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import authzkit
from authzkit import ConfigError, Settings
from authzkit.client.facade import AuthzClient
from authzkit.wire.redact import Secret


def test_from_env_builds_a_client_from_settings() -> None:
    settings = Settings.from_env(
        {
            "AUTHZKIT_BASE_URL": "https://authz.example/",
            "AUTHZKIT_AUTH_URL": "https://login.example",
            "AUTHZKIT_CLIENT_ID": "rs-1",
            "AUTHZKIT_CLIENT_SECRET": "very-secret-value",
            "AUTHZKIT_TIMEOUT": "3",
        },
        dotenv=None,
    )
    with AuthzClient.from_env(settings) as client:
        assert (client.base_url, client.auth_url, client.client_id, client.timeout) == (
            "https://authz.example",
            "https://login.example",
            "rs-1",
            3.0,
        )
        assert client.token_provider.token_url == "https://login.example/api/v3.1/oauth/tokens"
        assert client.keys.url == "https://authz.example/api/v1/discovery/keys"
        assert "very-secret-value" not in repr(client) + str(client)


def test_from_env_without_a_base_url_points_at_connect() -> None:
    with pytest.raises(ConfigError, match="connect"):
        AuthzClient.from_env(Settings())


@pytest.mark.parametrize(
    "options, message",
    [
        ({"client_id": "x"}, "client_secret"),
        ({"client_id": "x", "client_secret": "s", "timeout": 0}, "timeout"),
        ({"client_id": "x", "client_secret": "s", "alg": "RSA1_5"}, "alg"),
        ({"client_id": "x", "client_secret": "s", "base_url": "ftp://h"}, "base_url"),
    ],
)
def test_bad_arguments_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AuthzClient(**{"base_url": "http://127.0.0.1:9", **options})


def test_auth_url_defaults_to_base_url_and_secret_may_be_wrapped() -> None:
    with AuthzClient(
        base_url="http://127.0.0.1:9", client_id="x", client_secret=Secret("wrapped-secret")
    ) as client:
        assert client.auth_url == client.base_url


def test_shared_provider_must_match_the_client_id() -> None:
    first = AuthzClient(base_url="http://127.0.0.1:9", client_id="x", client_secret="s")
    with pytest.raises(ConfigError, match="differs"):
        AuthzClient(
            base_url="http://127.0.0.1:9", client_id="y", token_provider=first.token_provider
        )
    first.close()


def test_public_names_resolve_from_the_package() -> None:
    assert authzkit.AuthzClient is AuthzClient
    assert len(authzkit.request_hash(b"")) == 43


def test_from_env_passes_the_token_endpoint_settings(tmp_path: Path) -> None:
    from authzkit.wire.jwe import ClientKey

    from support.fake_service import client_key

    key_file = tmp_path / "client.pem"
    key_file.write_text(client_key().private_pem())
    settings = Settings.from_env(
        {
            "AUTHZKIT_BASE_URL": "https://authz.example",
            "AUTHZKIT_CLIENT_ID": "rs-1",
            "AUTHZKIT_ISSUER": "https://login.example/auth/realms/r",
            "AUTHZKIT_CLIENT_KEY_FILE": str(key_file),
        },
        dotenv=None,
    )
    with AuthzClient.from_env(settings) as client:
        provider = client.token_provider
        assert (provider.issuer, provider.client_auth) == (
            "https://login.example/auth/realms/r",
            "private_key_jwt",
        )
        assert provider.credentials.key_id == ClientKey.load(key_file).kid
        assert "PRIVATE" not in repr(client) + repr(provider) + repr(provider.credentials)


def test_a_shared_provider_owns_the_token_settings() -> None:
    first = AuthzClient(base_url="http://127.0.0.1:9", client_id="x", client_secret="s")
    with pytest.raises(ConfigError, match="shared token_provider"):
        AuthzClient(
            base_url="http://127.0.0.1:9",
            token_provider=first.token_provider,
            issuer="https://issuer.example",
        )
    first.close()
