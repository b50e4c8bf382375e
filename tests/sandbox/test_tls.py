"""TLS: the test kit (certificates of a private CA, Debian's stunnel4 in front of the sandbox)
and the sandbox serving HTTPS itself (``authzkit sandbox --tls-cert FILE --tls-key FILE``)."""

from __future__ import annotations

import datetime
import shutil
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from authzkit.cli import main
from authzkit.client.facade import AuthzClient
from authzkit.sandbox import Sandbox
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import SANDBOX_WORLD_PATH

from support.tls import Certificates, StunnelError, stunnel


@pytest.fixture
def behind_stunnel(sandbox: Sandbox, certificates: Certificates) -> Iterator[str]:
    """The session's sandbox behind stunnel, with the good server certificate."""
    with stunnel(sandbox.port, certificates.server_cert, certificates.server_key) as url:
        yield url


def _world(url: str, **tls: object) -> dict[str, object]:
    response = requests.get(url + SANDBOX_WORLD_PATH, timeout=5, **tls)  # type: ignore[arg-type]
    response.raise_for_status()
    document: dict[str, object] = response.json()
    return document


# -- the certificates --------------------------------------------------------------------------


def _certificate(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_the_server_certificate_names_localhost_and_its_ip(certificates: Certificates) -> None:
    names = (
        _certificate(certificates.server_cert)
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value
    )
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert _certificate(certificates.server_cert).issuer == _certificate(certificates.ca).subject


def test_the_deliberately_wrong_files_are_wrong(certificates: Certificates) -> None:
    now = datetime.datetime.now(datetime.UTC)
    assert _certificate(certificates.expired_cert).not_valid_after_utc < now
    wrong = (
        _certificate(certificates.wrong_host_cert)
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value
    )
    assert wrong.get_values_for_type(x509.DNSName) == ["wrong.example"]
    assert _certificate(certificates.other_ca).subject != _certificate(certificates.ca).subject
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(certificates.client_cert, certificates.client_key)  # a matching pair
    with pytest.raises(ssl.SSLError, match="KEY_VALUES_MISMATCH"):
        context.load_cert_chain(certificates.client_cert, certificates.mismatched_client_key)


def test_keys_are_readable_by_their_owner_only(certificates: Certificates) -> None:
    keys = [
        certificates.server_key,
        certificates.client_key,
        certificates.expired_key,
        certificates.wrong_host_key,
        certificates.mismatched_client_key,
    ]
    assert {oct(key.stat().st_mode & 0o777) for key in keys} == {"0o600"}


# -- stunnel in front of the sandbox -------------------------------------------------------------


def test_the_sandbox_answers_through_stunnel_to_a_client_trusting_the_ca(
    behind_stunnel: str, certificates: Certificates
) -> None:
    assert behind_stunnel.startswith("https://localhost:")
    assert "subjects" in _world(behind_stunnel, verify=str(certificates.ca))


def test_a_client_trusting_another_ca_is_refused(
    behind_stunnel: str, certificates: Certificates
) -> None:
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        _world(behind_stunnel, verify=str(certificates.other_ca))


@pytest.mark.parametrize(
    ("cert", "key", "said"),
    [
        ("expired_cert", "expired_key", "certificate has expired"),
        ("wrong_host_cert", "wrong_host_key", "Hostname mismatch"),
    ],
)
def test_an_expired_or_wrong_host_certificate_is_refused(
    sandbox: Sandbox, certificates: Certificates, cert: str, key: str, said: str
) -> None:
    with (
        stunnel(sandbox.port, getattr(certificates, cert), getattr(certificates, key)) as url,
        pytest.raises(requests.exceptions.SSLError, match=said),
    ):
        _world(url, verify=str(certificates.ca))


def test_mutual_tls_needs_a_client_certificate_signed_by_the_ca(
    sandbox: Sandbox, certificates: Certificates
) -> None:
    with stunnel(
        sandbox.port, certificates.server_cert, certificates.server_key, client_ca=certificates.ca
    ) as url:
        # TLS 1.3: the server's refusal arrives after the client's handshake is done, as an
        # alert (SSLError) or as a closed connection, depending on timing.
        with pytest.raises(requests.exceptions.ConnectionError):
            _world(url, verify=str(certificates.ca))
        pair = (str(certificates.client_cert), str(certificates.client_key))
        assert "subjects" in _world(url, verify=str(certificates.ca), cert=pair)


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True


def test_nothing_is_left_listening_after_the_block(
    sandbox: Sandbox, certificates: Certificates
) -> None:
    with stunnel(sandbox.port, certificates.server_cert, certificates.server_key) as url:
        port = int(url.rsplit(":", 1)[1])
        assert not _refused(port)
    assert _refused(port)


def test_stunnel_that_cannot_start_says_why_without_the_key(
    sandbox: Sandbox, certificates: Certificates
) -> None:
    key = certificates.mismatched_client_key
    with (
        pytest.raises(StunnelError, match="exited with code") as failure,
        stunnel(sandbox.port, certificates.server_cert, key),
    ):
        pass  # pragma: no cover - stunnel refuses the key before listening
    assert "key values mismatch" in str(failure.value)  # stunnel's own words
    assert key.read_text().splitlines()[1] not in str(failure.value)


def test_without_stunnel_the_test_is_skipped_saying_why(
    sandbox: Sandbox, certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with (
        pytest.raises(pytest.skip.Exception, match="stunnel4 is not installed"),
        stunnel(sandbox.port, certificates.server_cert, certificates.server_key),
    ):
        pass  # pragma: no cover


# -- the sandbox serving HTTPS itself ------------------------------------------------------------

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"


@pytest.fixture(scope="module")
def tls_sandbox(certificates: Certificates) -> Iterator[Sandbox]:
    with Sandbox(
        key_size=2048, tls_cert=certificates.server_cert, tls_key=certificates.server_key
    ) as sandbox:
        yield sandbox


def test_the_sandbox_serves_https_and_says_so_in_its_urls(
    tls_sandbox: Sandbox, certificates: Certificates
) -> None:
    assert tls_sandbox.base_url == f"https://127.0.0.1:{tls_sandbox.port}"
    assert tls_sandbox.token_url.startswith("https://")
    assert "subjects" in _world(tls_sandbox.base_url, verify=str(certificates.ca))
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        _world(tls_sandbox.base_url, verify=str(certificates.other_ca))


def test_a_client_trusting_the_ca_gets_decisions_over_https(
    tls_sandbox: Sandbox, certificates: Certificates
) -> None:
    with AuthzClient(
        base_url=tls_sandbox.base_url,
        auth_url=tls_sandbox.auth_url,
        client_id=tls_sandbox.client_id,
        client_secret=tls_sandbox.client_secret,
        tls_ca_file=str(certificates.ca),
    ) as client:
        client.authorize(
            "show_account_balance_public",
            resource_id=ALICE_ACCOUNT,
            subject_token=tls_sandbox.session_token("alice"),
        )
    assert tls_sandbox.stats()["authorize"] == {"authorized": 1}


def test_the_published_discovery_document_names_https_urls(certificates: Certificates) -> None:
    with Sandbox(
        key_size=2048,
        dialect="published",
        tls_cert=certificates.server_cert,
        tls_key=certificates.server_key,
    ) as sandbox:
        assert sandbox.issuer is not None and sandbox.issuer.startswith("https://")
        document = requests.get(
            sandbox.issuer + "/.well-known/openid-configuration",
            verify=str(certificates.ca),
            timeout=5,
        ).json()
    assert document["issuer"] == sandbox.issuer
    assert all(document[name].startswith("https://") for name in ("token_endpoint", "jwks_uri"))


def test_an_idle_keep_alive_connection_does_not_hold_up_the_stop(
    certificates: Certificates, capfd: pytest.CaptureFixture[str]
) -> None:
    sandbox = Sandbox(
        key_size=2048, tls_cert=certificates.server_cert, tls_key=certificates.server_key
    ).start()
    with requests.Session() as pooled:  # keeps its connection open, idle, in its pool
        pooled.get(sandbox.base_url + SANDBOX_WORLD_PATH, verify=str(certificates.ca), timeout=5)
        started = time.monotonic()
        sandbox.stop()
        took = time.monotonic() - started
    assert took < 1.5, f"stopping took {took:.1f} s (uvicorn waited for a TLS goodbye)"
    assert "graceful shutdown exceeded" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            {"tls_cert": "server_cert"},
            "tls_key is missing: tls_cert needs it (give both, or neither)",
        ),
        (
            {"tls_key": "server_key"},
            "tls_cert is missing: tls_key needs it (give both, or neither)",
        ),
        (
            {"tls_cert": "server_cert", "tls_key": "client_key"},
            "tls_key: {client_key} is not the key of the certificate in tls_cert ({server_cert})",
        ),
    ],
)
def test_a_bad_pair_is_refused_before_the_sandbox_starts(
    certificates: Certificates, given: dict[str, str], said: str
) -> None:
    paths = {name: getattr(certificates, field) for name, field in given.items()}
    with pytest.raises(ConfigError) as refused:
        Sandbox(**paths)
    assert str(refused.value) == said.format(
        **{field: getattr(certificates, field) for field in ("client_key", "server_cert")}
    )


# -- authzkit sandbox --tls-cert FILE --tls-key FILE -----------------------------------------------


def _encrypted_key(certificates: Certificates) -> Path:
    key = serialization.load_pem_private_key(certificates.server_key.read_bytes(), None)
    path = certificates.directory / "server-encrypted.key"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        )
    )
    return path


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--tls-cert", "{server_cert}"], "--tls-key is missing: --tls-cert needs it"),
        (["--tls-key", "{server_key}"], "--tls-cert is missing: --tls-key needs it"),
        (
            ["--tls-cert", "{directory}/absent.pem", "--tls-key", "{server_key}"],
            "argument --tls-cert: {directory}/absent.pem: no such file",
        ),
        (
            ["--tls-cert", "{server_cert}", "--tls-key", "{directory}"],
            "argument --tls-key: {directory}: not a file",
        ),
        (
            ["--tls-cert", "{server_cert}", "--tls-key", "{client_key}"],
            "--tls-key: {client_key} is not the key of the certificate in "
            "--tls-cert ({server_cert})",
        ),
        (
            ["--tls-cert", "{server_key}", "--tls-key", "{server_key}"],
            "--tls-cert: {server_key} holds no PEM certificate",
        ),
        (
            ["--tls-cert", "{server_cert}", "--tls-key", "{encrypted_key}"],
            "--tls-key: {encrypted_key} holds no unencrypted PEM private key",
        ),
    ],
)
def test_the_command_refuses_bad_tls_files_in_one_line_before_starting(
    certificates: Certificates,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    said: str,
) -> None:
    def started(self: Sandbox) -> None:
        raise AssertionError("the sandbox started despite bad TLS files")

    monkeypatch.setattr(Sandbox, "start", started)
    names = {
        name: getattr(certificates, name)
        for name in ("directory", "server_cert", "server_key", "client_key")
    }
    names["encrypted_key"] = _encrypted_key(certificates)
    code: int | str | None
    try:
        code = main(["sandbox", "--port", "0", *(flag.format(**names) for flag in flags)])
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1, err
    assert said.format(**names) in err
    assert "BEGIN" not in err and "Traceback" not in err


@pytest.mark.slow
def test_the_command_serves_https_and_prints_how_to_trust_it(
    tmp_path: Path, certificates: Certificates
) -> None:
    log = tmp_path / "sandbox.log"
    with SandboxProcess(
        log=log,
        tls_cert=certificates.server_cert,
        tls_key=certificates.server_key,
        tls_ca=certificates.ca,
    ) as process:
        base_url = process.base_url
        assert base_url.startswith("https://127.0.0.1:")
        assert process.env()["AUTHZKIT_TLS_CA_FILE"] == str(certificates.ca)
        assert process.admin().stats()["tokens_issued"] == 0  # the admin trusts tls_ca
    out = log.read_text()
    assert f"export AUTHZKIT_BASE_URL={base_url}\n" in out
    signed = f"AUTHZKIT_TLS_CA_FILE: the CA bundle, PEM, that signed {certificates.server_cert}"
    assert signed in out
    assert "export AUTHZKIT_TLS_CA_FILE=" in out
    assert "BEGIN" not in out and "Traceback" not in out
