"""authzkit against an OpenID Certified provider that no one here wrote (``oidc-provider``).

Every token-endpoint authentication authzkit offers, through discovery and through a token
URL; the three interop defects found against it (a silent sandbox fallback, the audience of
a trailing-slash issuer, a ``kid`` nobody registered) as regression tests; scope and
resource reaching the provider; refresh ahead of expiry and single-flight counted on the
provider's side; and the published sandbox giving the same verdict as the provider on the
same assertions.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from jwcrypto import jwk

from authzkit.shared.connection import connect_token_endpoint
from authzkit.wire.clock import ManualClock
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError, TokenRequestError

from support.certified_provider import (
    RESOURCE,
    SECRETS,
    CertifiedProvider,
    Keys,
    claims_of,
    run_cli,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def key_files(keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The named key as PEM (no kid) and as a JWK file (with its kid); the unnamed as PEM."""
    folder = tmp_path_factory.mktemp("interop-keys")
    files = {"named.pem": keys.named.private_pem(), "unnamed.pem": keys.unnamed.private_pem()}
    private = json.loads(jwk.JWK.from_pem(keys.named.private_pem().encode()).export_private())
    files["named.jwk"] = json.dumps({**private, "kid": Keys.KID})
    files["other-kid.jwk"] = json.dumps({**private, "kid": "another-kid"})
    for name, text in files.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)
    return {name: folder / name for name in files}


def method_env(
    provider: CertifiedProvider, key_files: dict[str, Path], method: str, *, via: str
) -> dict[str, str]:
    """The ``AUTHZKIT_*`` of one client, reaching the provider ``via`` its issuer or its
    token URL."""
    where = (
        {"AUTHZKIT_ISSUER": provider.issuer}
        if via == "issuer"
        else {"AUTHZKIT_TOKEN_URL": provider.token_endpoint}
    )
    client = {
        "client_secret_post": {
            "AUTHZKIT_CLIENT_ID": "post",
            "AUTHZKIT_CLIENT_SECRET": SECRETS["post"],
        },
        "client_secret_basic": {
            "AUTHZKIT_CLIENT_ID": "basic",
            "AUTHZKIT_CLIENT_SECRET": SECRETS["basic"],
        },
        "client_secret_jwt": {
            "AUTHZKIT_CLIENT_ID": "secret-jwt",
            "AUTHZKIT_CLIENT_SECRET": SECRETS["secret-jwt"],
        },
        "private_key_jwt": {
            "AUTHZKIT_CLIENT_ID": "key-jwt",
            "AUTHZKIT_CLIENT_KEY_FILE": str(key_files["named.jwk"]),
        },
    }[method]
    return {**where, **client, "AUTHZKIT_CLIENT_AUTH": method}


def fetch_token(env: dict[str, str], **provider_options: Any) -> str:
    """One token through the settings a user would set (no authorization host)."""
    with connect_token_endpoint(Settings.from_env(env, dotenv=None)) as client:
        return client.access_token()


METHODS = ["client_secret_post", "client_secret_basic", "client_secret_jwt", "private_key_jwt"]


@pytest.mark.parametrize("via", ["issuer", "token_url"])
@pytest.mark.parametrize("method", METHODS)
def test_every_client_authentication_gets_a_token(
    provider: CertifiedProvider, key_files: dict[str, Path], method: str, via: str
) -> None:
    env = method_env(provider, key_files, method, via=via)
    before = len(provider.token_calls(env["AUTHZKIT_CLIENT_ID"]))
    token = fetch_token(env)
    calls = provider.token_calls(env["AUTHZKIT_CLIENT_ID"])[before:]
    assert [c["status"] for c in calls] == [200]
    assert claims_of(token)["client_id"] == env["AUTHZKIT_CLIENT_ID"]
    assert claims_of(token)["iss"] == provider.issuer


def test_the_token_command_uses_the_provider_never_the_sandbox(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    # Defect 1: an issuer and credentials without AUTHZKIT_BASE_URL started the sandbox.
    env = method_env(provider, key_files, "private_key_jwt", via="issuer")
    before = len(provider.token_calls("key-jwt"))
    shown = run_cli("token", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "access token:" in shown.stdout and "sandbox" not in shown.stdout.lower()
    assert len(provider.token_calls("key-jwt")) == before + 1
    # A command that needs the authorization host names the variable, and starts nothing.
    refused = run_cli("authorize", "show_account_balance_public", env=env)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "AUTHZKIT_BASE_URL" in refused.stderr
    assert "AUTHZKIT_ISSUER" in refused.stderr and "Traceback" not in refused.stderr


def test_a_trailing_slash_issuer_is_the_audience_exactly(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    # Defect 2: the audience lost the issuer's trailing slash, which a strict provider refuses.
    fetch_token(method_env(provider, key_files, "private_key_jwt", via="issuer"))
    seen = provider.requests()
    assertion = provider.token_calls("key-jwt")[-1]["assertion"]
    assert assertion["claims"]["aud"] == provider.issuer
    assert {"method": "GET", "path": "/.well-known/openid-configuration", "status": 200} in seen
    assert not any(r["path"].startswith("//") for r in seen)


def test_an_issuer_the_discovery_document_does_not_state_is_refused(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    env = {
        **method_env(provider, key_files, "client_secret_post", via="issuer"),
        "AUTHZKIT_ISSUER": provider.origin,
    }  # the same host, without the slash
    before = len(provider.token_calls())
    with pytest.raises(ConfigError) as refused:
        fetch_token(env)
    message = str(refused.value)
    assert repr(provider.issuer) in message and repr(provider.origin) in message
    assert "identical" in message and SECRETS["post"] not in message
    assert len(provider.token_calls()) == before  # no token request after a bad document
    shown = run_cli("token", env=env)
    assert shown.returncode == 2 and shown.stderr.count("\n") == 1


def test_a_key_without_kid_sends_no_kid(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    # Defect 3: a thumbprint kid nobody registered; the provider matches kid exactly.
    env = {
        "AUTHZKIT_ISSUER": provider.issuer,
        "AUTHZKIT_CLIENT_ID": "key-jwt-no-kid",
        "AUTHZKIT_CLIENT_KEY_FILE": str(key_files["unnamed.pem"]),
    }
    fetch_token(env)
    call = provider.token_calls("key-jwt-no-kid")[-1]
    assert call["status"] == 200 and "kid" not in call["assertion"]["header"]


@pytest.mark.parametrize(("key_file", "key_id"), [("named.jwk", None), ("named.pem", Keys.KID)])
def test_the_registered_kid_from_the_file_or_the_setting(
    provider: CertifiedProvider, key_files: dict[str, Path], key_file: str, key_id: str | None
) -> None:
    env = {
        "AUTHZKIT_ISSUER": provider.issuer,
        "AUTHZKIT_CLIENT_ID": "key-jwt",
        "AUTHZKIT_CLIENT_KEY_FILE": str(key_files[key_file]),
        **({"AUTHZKIT_CLIENT_KEY_ID": key_id} if key_id else {}),
    }
    fetch_token(env)
    call = provider.token_calls("key-jwt")[-1]
    assert call["status"] == 200 and call["assertion"]["header"]["kid"] == Keys.KID


def test_a_refused_assertion_names_the_kid_and_the_audience(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    env = {
        "AUTHZKIT_ISSUER": provider.issuer,
        "AUTHZKIT_CLIENT_ID": "key-jwt-no-kid",
        "AUTHZKIT_CLIENT_KEY_FILE": str(key_files["unnamed.pem"]),
        "AUTHZKIT_CLIENT_KEY_ID": "never-registered",
    }
    with pytest.raises(TokenRequestError) as refused:
        fetch_token(env)
    message = str(refused.value)
    assert "invalid_client" in message
    assert "kid 'never-registered'" in message and f"aud {provider.issuer!r}" in message
    unnamed = {**env, "AUTHZKIT_CLIENT_ID": "key-jwt"}
    unnamed.pop("AUTHZKIT_CLIENT_KEY_ID")
    with pytest.raises(TokenRequestError, match="carried no kid"):
        fetch_token(unnamed)  # the other client's key: refused, and the message says so


def test_a_key_file_kid_that_disagrees_with_the_setting_exits_2(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    env = {
        "AUTHZKIT_ISSUER": provider.issuer,
        "AUTHZKIT_CLIENT_ID": "key-jwt",
        "AUTHZKIT_CLIENT_KEY_FILE": str(key_files["other-kid.jwk"]),
        "AUTHZKIT_CLIENT_KEY_ID": Keys.KID,
    }
    before = len(provider.requests())
    shown = run_cli("token", env=env)
    assert shown.returncode == 2 and shown.stderr.count("\n") == 1
    assert "'another-kid'" in shown.stderr and f"'{Keys.KID}'" in shown.stderr
    assert "AUTHZKIT_CLIENT_KEY_ID" in shown.stderr and "PRIVATE" not in shown.stderr
    assert len(provider.requests()) == before


def test_scope_and_resource_reach_the_provider(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    env = {
        **method_env(provider, key_files, "client_secret_basic", via="issuer"),
        "AUTHZKIT_TOKEN_SCOPE": "read",
        "AUTHZKIT_TOKEN_RESOURCE": RESOURCE,
    }
    token = fetch_token(env)
    call = provider.token_calls("basic")[-1]
    assert (call["scope"], call["resource"]) == ("read", RESOURCE)
    assert (claims_of(token)["scope"], claims_of(token)["aud"]) == ("read", RESOURCE)
    env["AUTHZKIT_TOKEN_SCOPE"] = "write"  # not this client's: the provider's refusal, named
    with pytest.raises(TokenRequestError, match="invalid_scope"):
        fetch_token(env)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AUTHZKIT_TOKEN_SCOPE", 'read "all"'),
        ("AUTHZKIT_TOKEN_SCOPE", "read\twrite"),
        ("AUTHZKIT_TOKEN_RESOURCE", "api.example.com"),
        ("AUTHZKIT_TOKEN_RESOURCE", RESOURCE + "#x"),
    ],
)
def test_a_malformed_scope_or_resource_exits_2(
    provider: CertifiedProvider, key_files: dict[str, Path], name: str, value: str
) -> None:
    env = {**method_env(provider, key_files, "client_secret_post", via="issuer"), name: value}
    before = len(provider.requests())
    shown = run_cli("token", env=env)
    assert shown.returncode == 2 and name in shown.stderr
    assert shown.stderr.count("\n") == 1 and SECRETS["post"] not in shown.stderr
    assert len(provider.requests()) == before


def test_refresh_ahead_of_expiry_and_single_flight_count_on_the_provider(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    from authzkit.client.token import TokenProvider
    from authzkit.client.transport import transport_for

    settings = Settings.from_env(
        method_env(provider, key_files, "private_key_jwt", via="token_url"), dotenv=None
    )
    clock = ManualClock(time.time())  # the assertions' iat/exp come from it too
    import requests

    with requests.Session() as session:
        tokens = TokenProvider(
            client_id="key-jwt",
            clock=clock,
            transport=transport_for(session, timeout=10),
            **settings.token_options(),
        )
        before = len(provider.token_calls("key-jwt"))

        def eight_at_once() -> set[str]:
            seen: list[str] = []
            threads = [
                threading.Thread(target=lambda: seen.append(tokens.token())) for _ in range(8)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return set(seen)

        first = eight_at_once()
        assert len(first) == 1 and len(provider.token_calls("key-jwt")) == before + 1
        clock.advance(1.0)  # well before the refresh point: the cached token
        assert eight_at_once() == first
        clock.advance(claims_of(first.pop())["exp"] - clock() - 1.0)  # inside the margin
        second = eight_at_once()
        assert len(second) == 1 and len(provider.token_calls("key-jwt")) == before + 2
    jtis = [c["assertion"]["claims"]["jti"] for c in provider.token_calls("key-jwt")]
    assert len(jtis) == len(set(jtis))  # never one jti twice


def test_the_provider_refuses_a_replayed_assertion(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    import requests

    from authzkit.client.credentials import ClientCredentials

    credentials = ClientCredentials(
        client_id="key-jwt", method="private_key_jwt", client_key=key_files["named.jwk"]
    )
    request = credentials.request(provider.token_endpoint, issuer=provider.issuer)
    answers = [
        requests.post(
            provider.token_endpoint,
            data=dict(request.fields),
            headers=dict(request.headers),
            timeout=10,
        )
        for _ in range(2)
    ]
    assert [a.status_code for a in answers] == [200, 401]
    assert answers[1].json()["error"] == "invalid_client"
    fresh = credentials.request(provider.token_endpoint, issuer=provider.issuer)  # a new jti
    assert (
        requests.post(
            provider.token_endpoint,
            data=dict(fresh.fields),
            headers=dict(fresh.headers),
            timeout=10,
        ).status_code
        == 200
    )


def test_a_token_url_that_is_no_token_endpoint_says_so(
    provider: CertifiedProvider, key_files: dict[str, Path]
) -> None:
    env = {
        **method_env(provider, key_files, "client_secret_post", via="token_url"),
        "AUTHZKIT_TOKEN_URL": provider.origin + "/tpyo",
    }
    shown = run_cli("token", env=env)
    assert shown.returncode == 1 and shown.stderr.count("\n") == 1
    assert f"no token endpoint at {provider.origin}/tpyo (HTTP 404)" in shown.stderr
    assert "refused" not in shown.stderr and SECRETS["post"] not in shown.stderr
