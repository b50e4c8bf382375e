"""The token endpoint styles: the draft's JSON and OAuth 2.0 client credentials (form) with
client_secret_post, client_secret_basic, private_key_jwt and RFC 8705's mutual TLS, against
a fake service that answers in the provider's published dialect (OpenID Connect discovery,
snake_case tokens, OAuth errors)."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from authzkit import ConfigError, TokenRequestError
from authzkit.client.credentials import TLS_METHODS, ClientCredentials, default_client_auth
from authzkit.client.facade import AuthzClient
from authzkit.client.token import TokenProvider
from authzkit.client.transport import RequestsTransport
from authzkit.wire.clock import ManualClock
from authzkit.wire.config import Settings
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE
from authzkit.wire.tls import TlsSettings
from authzkit.wire.variables import proof_variable

from support.fake_service import (
    OIDC_CONFIGURATION,
    OIDC_TOKEN,
    TOKEN,
    FakeService,
    PublishedService,
    Reply,
    client_key,
)
from support.tls import make_certificates

CLIENT_ID = PublishedService.CLIENT_ID
SECRET = PublishedService.CLIENT_SECRET


@pytest.fixture
def published_fake() -> Iterator[PublishedService]:
    fake = FakeService().start()
    try:
        yield PublishedService(fake)
    finally:
        fake.stop()


def provider(
    service: PublishedService, clock: ManualClock | None = None, **options: Any
) -> TokenProvider:
    """A provider of the published service's client (private_key_jwt unless told)."""
    options.setdefault("issuer", service.issuer)
    if options.get("client_auth", "private_key_jwt") == "private_key_jwt":
        options.setdefault("client_key", client_key().private_pem())
    else:
        options.setdefault("client_secret", SECRET)
    return TokenProvider(
        client_id=CLIENT_ID,
        clock=clock or ManualClock(),
        transport=RequestsTransport(requests.Session(), timeout=5),
        sleep=lambda seconds: None,
        **options,
    )


# -- the three OAuth 2.0 client authentications ----------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_client_secret_methods_are_form_encoded(
    published_fake: PublishedService, method: str
) -> None:
    tokens = provider(published_fake, client_auth=method)
    assert tokens.token().startswith("published-access-token-0001")
    seen = published_fake.fake.requests[OIDC_TOKEN][0]
    assert seen.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert seen.body["grant_type"] == "client_credentials"
    assert published_fake.auth_methods == [method]
    if method == "client_secret_basic":
        assert "client_secret" not in seen.body
        # RFC 6749 2.3.1: id and secret are form-urlencoded before the base64
        decoded = base64.b64decode(seen.headers["Authorization"][6:]).decode()
        assert decoded == "published-client:published-secret+value%2F%2B%26%3D"
    else:
        assert (seen.body["client_id"], seen.body["client_secret"]) == (CLIENT_ID, SECRET)


def test_private_key_jwt_assertion_claims(published_fake: PublishedService) -> None:
    clock = ManualClock(1_800_000_000)
    tokens = provider(published_fake, clock=clock)
    tokens.token()
    clock.advance(900)  # past the refresh point: a second token, a second assertion
    tokens.token()
    form = published_fake.fake.requests[OIDC_TOKEN][0].body
    assert form["client_assertion_type"] == CLIENT_ASSERTION_TYPE
    assert form["client_id"] == CLIENT_ID and "client_secret" not in form
    first, second = published_fake.assertions
    assert (first["iss"], first["sub"], first["aud"]) == (
        CLIENT_ID,
        CLIENT_ID,
        published_fake.issuer,
    )
    assert first["iat"] == first["nbf"] == 1_800_000_000
    assert first["exp"] - first["iat"] == 60
    assert second["iat"] == 1_800_000_900 and second["jti"] != first["jti"]
    header = json.loads(base64.urlsafe_b64decode(form["client_assertion"].split(".")[0] + "=="))
    # The fake's key file names no kid: a provider matching kids would reject a made-up one.
    assert header["alg"] == "RS256" and "kid" not in header
    assert tokens.credentials.key_id is None


def test_each_retry_signs_a_fresh_assertion(published_fake: PublishedService) -> None:
    published_fake.fake.handlers.pop(OIDC_TOKEN)
    published_fake.fake.script(
        OIDC_TOKEN,
        Reply(503, {"error": "temporarily_unavailable"}),
        Reply(
            200,
            {
                "access_token": "after-a-fault-aaaaaaaaaaaaaaaa",
                "expires_in": 900,
                "token_type": "bearer",
            },
        ),
    )
    tokens = provider(published_fake)
    assert tokens.token() == "after-a-fault-aaaaaaaaaaaaaaaa"
    jtis = [
        json.loads(base64.urlsafe_b64decode(seen.body["client_assertion"].split(".")[1] + "=="))[
            "jti"
        ]
        for seen in published_fake.fake.requests[OIDC_TOKEN]
    ]
    assert len(jtis) == 2 and len(set(jtis)) == 2  # a replayed jti would be refused


def test_assertion_audience_can_be_configured_or_is_the_token_url(
    published_fake: PublishedService,
) -> None:
    provider(published_fake, assertion_audience=published_fake.token_endpoint).token()
    provider(published_fake, issuer=None, token_url=published_fake.token_endpoint).token()
    assert [a["aud"] for a in published_fake.assertions] == [published_fake.token_endpoint] * 2


# -- discovery -------------------------------------------------------------------------------


def test_issuer_discovery_is_read_once_lazily(published_fake: PublishedService) -> None:
    clock = ManualClock()
    tokens = provider(published_fake, clock=clock)
    assert tokens.token_url is None and published_fake.fake.requests[OIDC_CONFIGURATION] == []
    tokens.token()
    clock.advance(900)
    tokens.token()
    assert tokens.token_url == published_fake.token_endpoint
    assert len(published_fake.fake.requests[OIDC_CONFIGURATION]) == 1
    assert published_fake.token_calls == 2


def test_token_url_overrides_the_issuer(published_fake: PublishedService) -> None:
    tokens = provider(published_fake, token_url=published_fake.token_endpoint)
    tokens.token()
    assert published_fake.fake.requests[OIDC_CONFIGURATION] == []
    assert published_fake.assertions[0]["aud"] == published_fake.issuer  # still the issuer


@pytest.mark.parametrize(
    "document",
    [
        {"issuer": "x"},
        {"token_endpoint": ""},
        {"token_endpoint": "ftp://elsewhere"},
        ["not", "a", "map"],
    ],
)
def test_discovery_without_a_token_endpoint_names_the_url(
    published_fake: PublishedService, document: Any
) -> None:
    published_fake.fake.script(OIDC_CONFIGURATION, Reply(200, document))
    with pytest.raises(ConfigError) as caught:
        provider(published_fake).token()
    assert published_fake.issuer + "/.well-known/openid-configuration" in str(caught.value)
    assert "token_endpoint" in str(caught.value)
    assert published_fake.token_calls == 0


def test_discovery_faults_are_retried_then_reported(published_fake: PublishedService) -> None:
    published_fake.fake.script(OIDC_CONFIGURATION, Reply(503, {"error": "temporarily_unavailable"}))
    with pytest.raises(TokenRequestError) as caught:
        provider(published_fake).token()
    assert "openid-configuration" in str(caught.value) and caught.value.status == 503
    assert len(published_fake.fake.requests[OIDC_CONFIGURATION]) == 3


def test_wrong_issuer_is_a_config_error(published_fake: PublishedService) -> None:
    with pytest.raises(ConfigError, match="404"):
        provider(published_fake, issuer=published_fake.fake.base_url + "/auth/realms/nope").token()


# -- responses and errors --------------------------------------------------------------------


def test_snake_case_response_is_read(published_fake: PublishedService) -> None:
    tokens = provider(published_fake)
    tokens.token()
    assert tokens.lifetime == 900 and tokens.current is not None
    assert tokens.current.token_type == "bearer"  # lower case, as the realm sends it


@pytest.mark.parametrize(
    "body",
    [
        {"access_token": "t-aaaaaaaaaaaaaaaaaaaaaaaa", "expires_in": 900, "token_type": "BEARER"},
        {"access_token": "t-aaaaaaaaaaaaaaaaaaaaaaaa", "expires_in": "900"},
        {"accessToken": "t-aaaaaaaaaaaaaaaaaaaaaaaa", "expires_in": 900, "tokenType": "Bearer"},
    ],
)
def test_either_spelling_and_any_case(fake: FakeService, body: dict[str, Any]) -> None:
    fake.script(TOKEN, Reply(200, body))
    tokens = TokenProvider(
        auth_url=fake.base_url,
        client_id="c",
        client_secret="s-value",
        transport=RequestsTransport(requests.Session(), timeout=5),
    )
    assert tokens.token() == "t-aaaaaaaaaaaaaaaaaaaaaaaa" and tokens.lifetime == 900


def test_a_token_that_is_not_bearer_is_refused(fake: FakeService) -> None:
    fake.script(TOKEN, Reply(200, {"access_token": "t", "expires_in": 9, "token_type": "mac"}))
    tokens = TokenProvider(
        auth_url=fake.base_url,
        client_id="c",
        client_secret="s-value",
        transport=RequestsTransport(requests.Session(), timeout=5),
    )
    with pytest.raises(TokenRequestError, match="'mac' token"):
        tokens.token()


def test_oauth_refusal_keeps_its_error_and_is_not_retried(published_fake: PublishedService) -> None:
    tokens = provider(published_fake, client_auth="client_secret_post", client_secret="wrong-one")
    with pytest.raises(TokenRequestError) as caught:
        tokens.token()
    error = caught.value
    assert (error.type, error.status) == ("unauthorized_client", 401)
    assert "INVALID_CREDENTIALS" in str(error) and "client_secret_post" in str(error)
    assert published_fake.token_calls == 1


def test_invalid_client_400_is_a_refusal(published_fake: PublishedService) -> None:
    published_fake.fake.handlers.pop(OIDC_TOKEN)
    published_fake.fake.script(
        OIDC_TOKEN,
        Reply(400, {"error": "invalid_client", "error_description": "Token reuse detected"}),
    )
    with pytest.raises(TokenRequestError) as caught:
        provider(published_fake).token()
    assert (caught.value.type, caught.value.status) == ("invalid_client", 400)
    assert published_fake.token_calls == 1


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, issuer, key, expected",
    [
        ("draft", None, None, "draft"),
        ("draft", "https://issuer", None, "client_secret_post"),
        ("draft", "https://issuer", "key", "private_key_jwt"),
        ("client_secret_basic", "https://issuer", "key", "client_secret_basic"),
    ],
)
def test_default_client_auth(
    given: str, issuer: str | None, key: str | None, expected: str
) -> None:
    assert default_client_auth(given, issuer=issuer, token_url=None, client_key=key) == expected


@pytest.mark.parametrize(
    "options, message",
    [
        ({"client_auth": "private_key_jwt", "issuer": "https://i"}, "needs client_key"),
        ({"client_auth": "client_secret_basic", "issuer": "https://i"}, "needs client_secret"),
        ({"client_auth": "mutual_tls", "issuer": "https://i"}, "client_auth must be one of"),
        (
            {"client_auth": "tls_client_auth", "issuer": "https://i"},
            "tls_client_auth needs a client certificate on the connection: tls_cert_file=",
        ),
        ({"client_auth": "client_secret_post", "client_secret": "s"}, "issuer= .* or token_url="),
        (
            {
                "client_key": "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n",
                "issuer": "https://i",
            },
            "client_key: not an RSA private key",
        ),
        ({"issuer": "issuer.example", "client_secret": "s"}, "issuer must be an http"),
    ],
)
def test_bad_token_settings_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        AuthzClient(base_url="http://127.0.0.1:9", client_id="x", **options)


def test_client_key_from_a_path_or_a_jwk(published_fake: PublishedService, tmp_path: Path) -> None:
    path = tmp_path / "client.pem"
    path.write_text(client_key().private_pem())
    provider(published_fake, client_key=path).token()
    provider(published_fake, client_key=str(path)).token()
    assert len(published_fake.assertions) == 2


def test_the_private_key_and_secret_never_show(
    published_fake: PublishedService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    pem = client_key().private_pem()
    with AuthzClient(
        base_url=published_fake.fake.base_url,
        client_id=CLIENT_ID,
        client_secret=SECRET,
        issuer=published_fake.issuer,
        client_key=pem,
    ) as client:
        client.access_token()
        credentials = ClientCredentials(
            client_id=CLIENT_ID, method="client_secret_post", client_secret=SECRET
        )
        shown = (
            "\n".join(
                f"{o!r} {o!s}"
                for o in (
                    client,
                    client.token_provider,
                    client.token_provider.credentials,
                    client.token_provider.current,
                    credentials,
                )
            )
            + caplog.text
        )
    body = pem.split("-----")[2].replace("\n", "")
    for line in (body[:40], body[-40:], SECRET, published_fake.assertions[0]["jti"]):
        assert line not in shown
    assert "private_key_jwt" in repr(client)


def test_an_endpoint_echoing_the_assertion_or_secret_is_scrubbed(
    published_fake: PublishedService,
) -> None:
    def echo(seen: Any) -> Reply:
        said = seen.body.get("client_assertion") or seen.body.get("client_secret")
        return Reply(400, {"error": "invalid_client", "error_description": f"bad: {said}"})

    published_fake.fake.handlers[OIDC_TOKEN] = echo
    choices: tuple[dict[str, Any], ...] = ({}, {"client_auth": "client_secret_post"})
    for options in choices:
        with pytest.raises(TokenRequestError) as caught:
            provider(published_fake, **options).token()
        sent = published_fake.fake.requests[OIDC_TOKEN][-1].body
        said = sent.get("client_assertion") or sent["client_secret"]
        assert said not in str(caught.value) and "bad: ****" in str(caught.value)


# -- RFC 8705: mutual TLS --------------------------------------------------------------------

MTLS_TOKEN = "/mtls/token"  # where the provider asks for client certificates (RFC 8705 §5)


@pytest.mark.parametrize("method", TLS_METHODS)
def test_mutual_tls_sends_the_client_id_and_no_secret(method: str) -> None:
    credentials = ClientCredentials(
        client_id=CLIENT_ID,
        method=method,
        client_secret=SECRET,
        scope="read",
        resource="https://api.example/",
    )
    request = credentials.request("https://issuer.example/token", issuer="https://issuer.example")
    assert dict(request.fields) == {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "scope": "read",
        "resource": "https://api.example/",
    }
    assert "Authorization" not in request.headers and request.secrets() == []
    chosen = default_client_auth(method, issuer="https://i", token_url=None, client_key=None)
    assert chosen == method
    assert ClientCredentials(client_id=CLIENT_ID, method=method).method == method  # no secret


@pytest.mark.parametrize(
    ("method", "variable"),
    [
        ("client_secret_post", "AUTHZKIT_CLIENT_SECRET"),
        ("draft", "AUTHZKIT_CLIENT_SECRET"),
        ("private_key_jwt", "AUTHZKIT_CLIENT_KEY_FILE"),
        ("tls_client_auth", "AUTHZKIT_TLS_CERT_FILE"),
        ("self_signed_tls_client_auth", "AUTHZKIT_TLS_CERT_FILE"),
    ],
)
def test_what_proves_the_client_by_method(method: str, variable: str) -> None:
    assert proof_variable(method) == variable


def mtls_discovery(published_fake: PublishedService, aliases: Any) -> None:
    """Script a discovery document naming ``aliases``, and a token endpoint at MTLS_TOKEN."""
    fake = published_fake.fake
    fake.script(
        OIDC_CONFIGURATION,
        Reply(
            200,
            {
                "issuer": published_fake.issuer,
                "token_endpoint": published_fake.token_endpoint,
                "mtls_endpoint_aliases": aliases,
            },
        ),
    )
    fake.script(
        MTLS_TOKEN,
        Reply(
            200,
            {
                "access_token": "mtls-token-aaaaaaaaaaaaaaaaaaaa",
                "expires_in": 900,
                "token_type": "Bearer",
            },
        ),
    )


def mtls_provider(published_fake: PublishedService, **options: Any) -> TokenProvider:
    """A tls_client_auth provider whose transport cannot tell its certificate (a fake's)."""
    return TokenProvider(
        client_id=CLIENT_ID,
        client_auth="tls_client_auth",
        issuer=published_fake.issuer,
        sleep=lambda seconds: None,
        transport=RequestsTransport(requests.Session(), timeout=5),
        **options,
    )


def test_mutual_tls_takes_the_discovered_mtls_alias(published_fake: PublishedService) -> None:
    alias = published_fake.fake.base_url + MTLS_TOKEN
    mtls_discovery(
        published_fake, {"token_endpoint": alias, "revocation_endpoint": "https://elsewhere/revoke"}
    )
    tokens = mtls_provider(published_fake)
    assert tokens.token() == "mtls-token-aaaaaaaaaaaaaaaaaaaa" and tokens.token_url == alias
    assert published_fake.token_calls == 0
    # A client that authenticates otherwise keeps the plain token endpoint.
    assert provider(published_fake, client_auth="client_secret_post").token()
    assert published_fake.token_calls == 1


def test_an_explicit_token_url_wins_over_the_mtls_alias(published_fake: PublishedService) -> None:
    mtls_discovery(published_fake, {"token_endpoint": "https://never.example/token"})
    tokens = mtls_provider(published_fake, token_url=published_fake.fake.base_url + MTLS_TOKEN)
    assert tokens.token() == "mtls-token-aaaaaaaaaaaaaaaaaaaa"
    assert published_fake.fake.requests[OIDC_CONFIGURATION] == []


@pytest.mark.parametrize("aliases", [{}, None, {"userinfo_endpoint": "https://x/"}])
def test_without_an_mtls_token_alias_the_token_endpoint(
    published_fake: PublishedService, aliases: Any
) -> None:
    mtls_discovery(published_fake, aliases)
    published_fake.fake.handlers.pop(OIDC_TOKEN)
    published_fake.fake.script(
        OIDC_TOKEN, Reply(200, {"access_token": "plain-aaaaaaaaaaaaaaaa", "expires_in": 900})
    )
    tokens = mtls_provider(published_fake)
    assert tokens.token() == "plain-aaaaaaaaaaaaaaaa"
    assert tokens.token_url == published_fake.token_endpoint


@pytest.mark.parametrize("alias", ["ftp://x/token", "", 42])
def test_an_mtls_alias_that_is_no_url_names_the_field(
    published_fake: PublishedService, alias: Any
) -> None:
    mtls_discovery(published_fake, {"token_endpoint": alias})
    with pytest.raises(ConfigError, match=r"mtls_endpoint_aliases\.token_endpoint is not an http"):
        mtls_provider(published_fake).token()


def test_a_refused_mutual_tls_client_is_told_what_the_provider_matches(
    published_fake: PublishedService,
) -> None:
    mtls_discovery(published_fake, {"token_endpoint": published_fake.fake.base_url + MTLS_TOKEN})
    published_fake.fake.script(MTLS_TOKEN, Reply(401, {"error": "invalid_client"}))
    with pytest.raises(TokenRequestError) as caught:
        mtls_provider(published_fake).token()
    message = str(caught.value)
    assert "refused client 'published-client' (tls_client_auth)" in message
    assert "no certificate" in message and "mtls_endpoint_aliases" in message
    assert "subject DN" in message
    assert len(published_fake.fake.requests[MTLS_TOKEN]) == 1  # a refusal is not retried


def test_mutual_tls_needs_a_certificate_on_the_connection(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path)
    without = TlsSettings()
    with pytest.raises(
        ConfigError,
        match="tls_cert_file= and tls_key_file= "
        r"\(AUTHZKIT_TLS_CERT_FILE, AUTHZKIT_TLS_KEY_FILE\)",
    ):
        TokenProvider(
            client_id="c",
            client_auth="tls_client_auth",
            token_url="https://t/",
            transport=RequestsTransport(without.session(), timeout=5, tls=without),
        )
    shown = TlsSettings.of(cert_file=certificates.client_cert, key_file=certificates.client_key)
    for transport in (
        RequestsTransport(shown.session(), timeout=5, tls=shown),
        RequestsTransport(requests.Session(), timeout=5, tls=shown),
    ):
        tokens = TokenProvider(
            client_id="c",
            client_auth="self_signed_tls_client_auth",
            token_url="https://t/",
            transport=transport,
        )
        assert tokens.certificate == str(certificates.client_cert)
    with AuthzClient(
        base_url="https://svc.example",
        client_id="c",
        token_url="https://t/",
        client_auth="tls_client_auth",
        tls_cert_file=str(certificates.client_cert),
        tls_key_file=str(certificates.client_key),
    ) as client:
        assert client.token_provider.client_auth == "tls_client_auth"


@pytest.mark.parametrize("method", TLS_METHODS)
def test_the_variables_name_the_missing_certificate(method: str) -> None:
    env = {
        "AUTHZKIT_ISSUER": "https://issuer.example/",
        "AUTHZKIT_CLIENT_ID": "c",
        "AUTHZKIT_CLIENT_AUTH": method,
    }
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env, dotenv=None)
    message = str(caught.value)
    assert f"AUTHZKIT_CLIENT_AUTH is {method}" in message
    assert "AUTHZKIT_TLS_CERT_FILE is not set" in message and "\n" not in message
