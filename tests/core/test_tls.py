"""TLS settings, checked before any request: where the trust store comes from, what a bad
file is called, and that no message quotes a file. (Handshakes against a real TLS terminator
are ``tests/tls``.)"""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import requests

from authzkit import AuthzClient
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError
from authzkit.wire.tls import TlsSettings, tls_failure

from support.tls import Certificates


def settings(**env: str) -> Settings:
    """Settings from exactly ``env`` (also the outside variables: no REQUESTS_CA_BUNDLE of
    the machine running the tests)."""
    return Settings.from_env(env, dotenv=None)


def test_the_ca_comes_from_authzkit_then_requests_then_openssl(
    certificates: Certificates,
) -> None:
    ca, other = str(certificates.ca), str(certificates.other_ca)
    every = {
        "AUTHZKIT_TLS_CA_FILE": ca,
        "REQUESTS_CA_BUNDLE": other,
        "SSL_CERT_FILE": other,
    }
    assert settings(**every).tls.ca_file == ca
    del every["AUTHZKIT_TLS_CA_FILE"]
    every["REQUESTS_CA_BUNDLE"] = ca
    chosen = settings(**every).tls
    assert (chosen.ca_file, chosen.ca_setting) == (ca, "REQUESTS_CA_BUNDLE")
    chosen = settings(SSL_CERT_FILE=ca).tls
    assert (chosen.ca_file, chosen.ca_setting) == (ca, "SSL_CERT_FILE")
    assert settings().tls == TlsSettings()
    assert settings().tls.verify is True  # the system's store, verified


def test_a_client_certificate_is_presented_with_its_key(certificates: Certificates) -> None:
    tls = settings(
        AUTHZKIT_TLS_CERT_FILE=str(certificates.client_cert),
        AUTHZKIT_TLS_KEY_FILE=str(certificates.client_key),
    ).tls
    assert tls.cert == (str(certificates.client_cert), str(certificates.client_key))
    assert tls.requests_options() == {"verify": True, "cert": tls.cert}
    assert isinstance(tls.ssl_context(), ssl.SSLContext)


def test_one_file_holding_certificate_and_key_needs_no_key_file(
    certificates: Certificates, tmp_path: Path
) -> None:
    both = tmp_path / "client-with-key.pem"
    both.write_bytes(certificates.client_cert.read_bytes() + certificates.client_key.read_bytes())
    assert settings(AUTHZKIT_TLS_CERT_FILE=str(both)).tls.cert == str(both)


def bad_inputs(certificates: Certificates, tmp_path: Path) -> list[tuple[dict[str, str], str]]:
    """``(variables, what the one line must say)`` for every file a user can get wrong."""
    missing = str(tmp_path / "nowhere.pem")
    return [
        ({"AUTHZKIT_TLS_CA_FILE": missing}, f"AUTHZKIT_TLS_CA_FILE: no such file: {missing}"),
        ({"REQUESTS_CA_BUNDLE": missing}, f"REQUESTS_CA_BUNDLE: no such file: {missing}"),
        (
            {"AUTHZKIT_TLS_CA_FILE": str(certificates.server_key)},
            f"AUTHZKIT_TLS_CA_FILE: {certificates.server_key} holds no PEM certificate",
        ),
        (
            {"AUTHZKIT_TLS_KEY_FILE": str(certificates.client_key)},
            "AUTHZKIT_TLS_KEY_FILE is set but AUTHZKIT_TLS_CERT_FILE is not",
        ),
        (
            {"AUTHZKIT_TLS_CERT_FILE": str(certificates.client_cert)},
            f"AUTHZKIT_TLS_CERT_FILE: {certificates.client_cert} holds no certificate "
            f"with its private key",
        ),
        (
            {
                "AUTHZKIT_TLS_CERT_FILE": str(certificates.client_cert),
                "AUTHZKIT_TLS_KEY_FILE": str(certificates.mismatched_client_key),
            },
            f"AUTHZKIT_TLS_KEY_FILE: {certificates.mismatched_client_key} is not the key "
            f"of the certificate in AUTHZKIT_TLS_CERT_FILE",
        ),
        (
            {"AUTHZKIT_TLS_CERT_FILE": str(tmp_path)},
            f"AUTHZKIT_TLS_CERT_FILE: {tmp_path} is a directory",
        ),
        ({"AUTHZKIT_TLS_INSECURE": "maybe"}, "AUTHZKIT_TLS_INSECURE must be 1/0"),
    ]


def test_a_bad_file_is_one_line_naming_the_variable_and_never_its_contents(
    certificates: Certificates, tmp_path: Path
) -> None:
    contents = [
        line
        for path in (certificates.server_key, certificates.client_key, certificates.client_cert)
        for line in path.read_text().splitlines()[1:3]
    ]
    for env, expected in bad_inputs(certificates, tmp_path):
        with pytest.raises(ConfigError) as raised:
            settings(**env)
        message = str(raised.value)
        assert expected in message, env
        assert "\n" not in message
        assert not any(line in message for line in contents)


def test_a_ca_file_fixed_after_a_refusal_is_taken(
    certificates: Certificates, tmp_path: Path
) -> None:
    """The check of a CA file is remembered per version of the file, not per path."""
    ca = tmp_path / "ca.pem"
    ca.write_bytes(certificates.server_key.read_bytes())
    with pytest.raises(ConfigError, match="holds no PEM certificate"):
        settings(AUTHZKIT_TLS_CA_FILE=str(ca))
    ca.write_bytes(certificates.ca.read_bytes())
    assert settings(AUTHZKIT_TLS_CA_FILE=str(ca)).tls.ca_file == str(ca)


def test_the_client_takes_the_same_three_as_keyword_arguments(
    certificates: Certificates, tmp_path: Path
) -> None:
    client = AuthzClient(
        base_url="https://localhost:1",
        client_id="someone",
        client_secret="tls-test-secret",
        tls_ca_file=str(certificates.ca),
        tls_cert_file=str(certificates.client_cert),
        tls_key_file=str(certificates.client_key),
    )
    assert client.tls.ca_file == str(certificates.ca)
    assert client.tls.cert == (str(certificates.client_cert), str(certificates.client_key))
    client.close()
    with pytest.raises(ConfigError, match="tls_ca_file: no such file"):
        AuthzClient(
            base_url="https://localhost:1",
            client_id="someone",
            tls_ca_file=str(tmp_path / "none.pem"),
        )
    with pytest.raises(ConfigError, match="not both"):
        AuthzClient(
            base_url="https://localhost:1",
            client_id="someone",
            tls=TlsSettings(),
            tls_ca_file=str(certificates.ca),
        )


def test_insecure_is_named_and_turns_verification_off() -> None:
    tls = settings(AUTHZKIT_TLS_INSECURE="1").tls
    assert tls.verify is False
    assert tls.warning is not None and "AUTHZKIT_TLS_INSECURE" in tls.warning
    assert tls.ssl_context().verify_mode == ssl.CERT_NONE
    assert TlsSettings().warning is None


def test_a_refused_connection_is_no_tls_failure() -> None:
    try:
        requests.get("http://127.0.0.1:9/", timeout=2)  # discard: nothing listens
    except requests.RequestException as exc:
        assert tls_failure(exc, "http://127.0.0.1:9") is None
    else:  # pragma: no cover - something listens on the discard port
        pytest.skip("something answers on 127.0.0.1:9")
