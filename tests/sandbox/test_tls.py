"""TLS: the test kit (certificates of a private CA, Debian's stunnel4 in front of the sandbox)
and the sandbox serving HTTPS itself (``authzkit sandbox --tls-cert FILE --tls-key FILE``)."""

from __future__ import annotations

import datetime
import shutil
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography import x509

from authzkit.sandbox import Sandbox
from authzkit.spec import SANDBOX_WORLD_PATH

from support.tls import Certificates, StunnelError, make_certificates, stunnel


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


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
    names = _certificate(certificates.server_cert).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert _certificate(certificates.server_cert).issuer == _certificate(certificates.ca).subject


def test_the_deliberately_wrong_files_are_wrong(certificates: Certificates) -> None:
    now = datetime.datetime.now(datetime.UTC)
    assert _certificate(certificates.expired_cert).not_valid_after_utc < now
    wrong = _certificate(certificates.wrong_host_cert).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert wrong.get_values_for_type(x509.DNSName) == ["wrong.example"]
    assert _certificate(certificates.other_ca).subject != _certificate(certificates.ca).subject
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_cert_chain(certificates.client_cert, certificates.client_key)  # a matching pair
    with pytest.raises(ssl.SSLError, match="KEY_VALUES_MISMATCH"):
        context.load_cert_chain(certificates.client_cert, certificates.mismatched_client_key)


def test_keys_are_readable_by_their_owner_only(certificates: Certificates) -> None:
    keys = [certificates.server_key, certificates.client_key, certificates.expired_key,
            certificates.wrong_host_key, certificates.mismatched_client_key]
    assert {oct(key.stat().st_mode & 0o777) for key in keys} == {"0o600"}


# -- stunnel in front of the sandbox -------------------------------------------------------------


def test_the_sandbox_answers_through_stunnel_to_a_client_trusting_the_ca(
        behind_stunnel: str, certificates: Certificates) -> None:
    assert behind_stunnel.startswith("https://localhost:")
    assert "subjects" in _world(behind_stunnel, verify=str(certificates.ca))


def test_a_client_trusting_another_ca_is_refused(behind_stunnel: str,
                                                 certificates: Certificates) -> None:
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        _world(behind_stunnel, verify=str(certificates.other_ca))


@pytest.mark.parametrize(("cert", "key", "said"), [
    ("expired_cert", "expired_key", "certificate has expired"),
    ("wrong_host_cert", "wrong_host_key", "Hostname mismatch"),
])
def test_an_expired_or_wrong_host_certificate_is_refused(
        sandbox: Sandbox, certificates: Certificates, cert: str, key: str, said: str) -> None:
    with stunnel(sandbox.port, getattr(certificates, cert), getattr(certificates, key)) as url, \
            pytest.raises(requests.exceptions.SSLError, match=said):
        _world(url, verify=str(certificates.ca))


def test_mutual_tls_needs_a_client_certificate_signed_by_the_ca(
        sandbox: Sandbox, certificates: Certificates) -> None:
    with stunnel(sandbox.port, certificates.server_cert, certificates.server_key,
                 client_ca=certificates.ca) as url:
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


def test_nothing_is_left_listening_after_the_block(sandbox: Sandbox,
                                                    certificates: Certificates) -> None:
    with stunnel(sandbox.port, certificates.server_cert, certificates.server_key) as url:
        port = int(url.rsplit(":", 1)[1])
        assert not _refused(port)
    assert _refused(port)


def test_stunnel_that_cannot_start_says_why_without_the_key(sandbox: Sandbox,
                                                            certificates: Certificates) -> None:
    key = certificates.mismatched_client_key
    with pytest.raises(StunnelError, match="exited with code") as failure, \
            stunnel(sandbox.port, certificates.server_cert, key):
        pass  # pragma: no cover - stunnel refuses the key before listening
    assert "key values mismatch" in str(failure.value)  # stunnel's own words
    assert key.read_text().splitlines()[1] not in str(failure.value)


def test_without_stunnel_the_test_is_skipped_saying_why(
        sandbox: Sandbox, certificates: Certificates, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match="stunnel4 is not installed"), \
            stunnel(sandbox.port, certificates.server_cert, certificates.server_key):
        pass  # pragma: no cover
