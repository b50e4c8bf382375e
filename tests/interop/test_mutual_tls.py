"""RFC 8705 mutual-TLS client authentication against the OpenID Certified provider.

``oidc-provider`` offers both of RFC 8705's client authentications, ``tls_client_auth``
(PKI: the client registers its certificate's subject DN) and ``self_signed_tls_client_auth``
(the client registers its certificate in its ``jwks``). Here it serves HTTPS with a private
CA made for this run, asks for client certificates on a second listener only, and names that
listener in its discovery document's ``mtls_endpoint_aliases`` (RFC 8705 §5), as deployments
that keep client certificates off the issuer's own host do. What it did is read from its own
request log: the client, the authentication it matched, the certificate's subject, whether a
secret came, and why it refused.
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from jwcrypto import jwk

from authzkit.shared.connection import connect_token_endpoint
from authzkit.wire.config import Settings

from support.certified_provider import (
    CertifiedProvider,
    Keys,
    ProviderTls,
    claims_of,
    mtls_clients,
    run_cli,
)
from support.tls import Certificates

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A client certificate no CA signed (RFC 8705 §2.2) and its key, as PEM files."""
    folder = tmp_path_factory.mktemp("self-signed")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "authzkit self-signed client")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "client.pem", folder / "client.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.touch(mode=0o600)
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def registered_jwk(cert_file: Path) -> dict[str, Any]:
    """The public JWK a self-signed client registers: its key, and the certificate as x5c."""
    pem = cert_file.read_bytes()
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    return {
        **json.loads(jwk.JWK.from_pem(pem).export_public()),
        "x5c": [base64.b64encode(der).decode()],
    }


def subject_dn(cert_file: Path) -> str:
    """The certificate's subject as RFC 4514 writes it (what tls_client_auth_subject_dn is)."""
    return x509.load_pem_x509_certificate(cert_file.read_bytes()).subject.rfc4514_string()


@pytest.fixture(scope="module")
def mtls_provider(
    keys: Keys, certificates: Certificates, self_signed: tuple[Path, Path]
) -> Iterator[CertifiedProvider]:
    tls = ProviderTls(certificates.ca, certificates.server_cert, certificates.server_key)
    extra = mtls_clients(subject_dn(certificates.client_cert), registered_jwk(self_signed[0]))
    running = CertifiedProvider(keys, tls=tls, extra_clients=extra)
    try:
        yield running
    finally:
        running.stop()


def mtls_env(
    provider: CertifiedProvider,
    certificates: Certificates,
    client_id: str = "mtls",
    **overrides: str,
) -> dict[str, str]:
    """A mutual-TLS client's AUTHZKIT_* as a user sets them: the issuer, the CA, and the
    client certificate with its key; no secret, no client key."""
    return {
        "AUTHZKIT_ISSUER": provider.issuer,
        "AUTHZKIT_CLIENT_AUTH": "tls_client_auth",
        "AUTHZKIT_CLIENT_ID": client_id,
        "AUTHZKIT_TLS_CA_FILE": str(certificates.ca),
        "AUTHZKIT_TLS_CERT_FILE": str(certificates.client_cert),
        "AUTHZKIT_TLS_KEY_FILE": str(certificates.client_key),
        **overrides,
    }


def token_calls(provider: CertifiedProvider, client_id: str, since: int) -> list[dict[str, Any]]:
    """``client_id``'s token calls after the first ``since`` requests the provider logged."""
    return [
        r
        for r in provider.requests()[since:]
        if r["path"] == "/token" and r.get("client_id") == client_id
    ]


def shows_a_key(shown: Any, *key_files: Path) -> bool:
    """Whether any output of ``shown`` holds a PEM key or a line of one of ``key_files``
    (a bool, so a failing assertion does not print the key either)."""
    outputs = (shown.stdout, shown.stderr)
    lines = [line for key in key_files for line in key.read_text().splitlines()[1:-1]]
    return any("PRIVATE KEY" in out or any(line in out for line in lines) for out in outputs)


def assert_one_quiet_line(shown: Any, *key_files: Path) -> None:
    """One line on stderr, no traceback, and nothing of a key in any output."""
    assert shown.stderr.count("\n") == 1 and "Traceback" not in shown.stderr
    leaked = shows_a_key(shown, *key_files)
    assert not leaked


def test_the_token_command_authenticates_by_its_certificate_at_the_mtls_alias(
    mtls_provider: CertifiedProvider, certificates: Certificates
) -> None:
    since = len(mtls_provider.requests())
    shown = run_cli("token", env=mtls_env(mtls_provider, certificates))
    assert shown.returncode == 0, shown.stderr
    assert "access token:" in shown.stdout
    leaked = shows_a_key(shown, certificates.client_key)
    assert not leaked
    seen = mtls_provider.requests()[since:]
    assert {
        "method": "GET",
        "path": "/.well-known/openid-configuration",
        "status": 200,
        "listener": "main",
    } in seen
    [call] = token_calls(mtls_provider, "mtls", since)
    assert call["status"] == 200 and call["listener"] == "mtls"  # RFC 8705 §5's alias
    assert call["client_auth_method"] == "tls_client_auth"
    assert call["client_certificate"] == subject_dn(certificates.client_cert)
    assert call["client_certificate_verified"] is True
    assert call["client_secret_sent"] is False and "assertion" not in call


def test_the_token_is_the_clients_and_no_secret_is_needed(
    mtls_provider: CertifiedProvider, certificates: Certificates
) -> None:
    settings = Settings.from_env(mtls_env(mtls_provider, certificates), dotenv=None)
    assert settings.client_secret is None and settings.client_key_file is None
    with connect_token_endpoint(settings) as client:
        token = client.access_token()
        assert mtls_provider.mtls_origin is not None, "the provider has no mTLS origin"
        assert client.token_provider.token_url == mtls_provider.mtls_origin + "/token"
    assert claims_of(token)["client_id"] == "mtls"
    assert claims_of(token)["iss"] == mtls_provider.issuer


def test_a_self_signed_certificate_registered_in_jwks(
    mtls_provider: CertifiedProvider, certificates: Certificates, self_signed: tuple[Path, Path]
) -> None:
    env = mtls_env(
        mtls_provider,
        certificates,
        "mtls-self-signed",
        AUTHZKIT_CLIENT_AUTH="self_signed_tls_client_auth",
        AUTHZKIT_TLS_CERT_FILE=str(self_signed[0]),
        AUTHZKIT_TLS_KEY_FILE=str(self_signed[1]),
    )
    since = len(mtls_provider.requests())
    with connect_token_endpoint(Settings.from_env(env, dotenv=None)) as client:
        assert claims_of(client.access_token())["client_id"] == "mtls-self-signed"
    [call] = token_calls(mtls_provider, "mtls-self-signed", since)
    assert call["client_auth_method"] == "self_signed_tls_client_auth"
    assert call["client_certificate_verified"] is False  # no CA: its thumbprint is the proof


def test_an_explicit_token_url_wins_over_the_alias(
    mtls_provider: CertifiedProvider, certificates: Certificates
) -> None:
    assert mtls_provider.mtls_origin is not None
    env = mtls_env(
        mtls_provider, certificates, AUTHZKIT_TOKEN_URL=mtls_provider.mtls_origin + "/token"
    )
    env.pop("AUTHZKIT_ISSUER")
    since = len(mtls_provider.requests())
    with connect_token_endpoint(Settings.from_env(env, dotenv=None)) as client:
        client.access_token()
    assert [r["path"] for r in mtls_provider.requests()[since:]] == ["/token"]  # no discovery


def test_without_the_certificate_the_provider_refuses(
    mtls_provider: CertifiedProvider, certificates: Certificates
) -> None:
    # The issuer's own token endpoint asks for no client certificate, so none is shown.
    env = mtls_env(mtls_provider, certificates, AUTHZKIT_TOKEN_URL=mtls_provider.token_endpoint)
    since = len(mtls_provider.requests())
    shown = run_cli("token", env=env)
    assert shown.returncode == 1, shown.stderr
    assert_one_quiet_line(shown, certificates.client_key)
    assert f"{mtls_provider.token_endpoint} refused client 'mtls' (tls_client_auth)" in shown.stderr
    assert "invalid_client" in shown.stderr and "mtls_endpoint_aliases" in shown.stderr
    assert str(certificates.client_cert) in shown.stderr
    [call] = token_calls(mtls_provider, "mtls", since)
    assert call["error_detail"] == "client certificate was not provided"
    assert "client_certificate" not in call and call["listener"] == "main"
    # The mTLS listener asks but does not insist: the provider, not TLS, refuses.
    assert mtls_provider.mtls_origin is not None
    answer = requests.post(
        mtls_provider.mtls_origin + "/token",
        timeout=10,
        verify=str(certificates.ca),
        data={"grant_type": "client_credentials", "client_id": "mtls"},
    )
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")
    assert token_calls(mtls_provider, "mtls", since)[-1]["error_detail"] == (
        "client certificate was not provided"
    )


def test_a_certificate_of_another_subject_is_refused(
    mtls_provider: CertifiedProvider, certificates: Certificates
) -> None:
    since = len(mtls_provider.requests())
    shown = run_cli("token", env=mtls_env(mtls_provider, certificates, "mtls-other"))
    assert shown.returncode == 1, shown.stderr
    assert_one_quiet_line(shown, certificates.client_key)
    assert "refused client 'mtls-other' (tls_client_auth)" in shown.stderr
    assert "subject DN" in shown.stderr
    [call] = token_calls(mtls_provider, "mtls-other", since)
    assert call["listener"] == "mtls"
    assert call["client_certificate"] == subject_dn(certificates.client_cert)
    assert call["error_detail"] == "certificate subject value does not match the registered one"


@pytest.mark.parametrize("method", ["tls_client_auth", "self_signed_tls_client_auth"])
def test_no_client_certificate_is_a_config_error_before_any_request(
    mtls_provider: CertifiedProvider, certificates: Certificates, method: str
) -> None:
    env = mtls_env(mtls_provider, certificates, AUTHZKIT_CLIENT_AUTH=method)
    del env["AUTHZKIT_TLS_CERT_FILE"], env["AUTHZKIT_TLS_KEY_FILE"]
    since = len(mtls_provider.requests())
    shown = run_cli("token", env=env)
    assert shown.returncode == 2
    assert_one_quiet_line(shown)
    assert f"AUTHZKIT_CLIENT_AUTH is {method}" in shown.stderr
    assert "AUTHZKIT_TLS_CERT_FILE is not set" in shown.stderr
    assert "AUTHZKIT_CLIENT_SECRET" not in shown.stderr
    assert len(mtls_provider.requests()) == since
