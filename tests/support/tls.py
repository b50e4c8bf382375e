"""TLS for the tests: certificates made per test run, and a real TLS terminator in front of a
plain-HTTP server.

Real environments speak TLS, usually with a certificate from a company's own CA. To test that
authzkit trusts what it should and refuses what it should not, the suite needs certificates
it controls and a TLS server it did not write (a Python TLS server of our own would share our
mistakes):

- :func:`make_certificates` writes a private CA and the certificates a test needs, signed by
  it or deliberately wrong, as PEM files (EC P-256 keys: made in milliseconds);
- :func:`stunnel` runs Debian's ``stunnel4`` in front of a plain-HTTP backend on 127.0.0.1
  (an embedded :class:`authzkit.Sandbox`, a ``SandboxProcess``) and yields its
  ``https://localhost:<port>`` URL; it skips the test when ``stunnel4`` is not installed
  (``.ci/run`` installs it, so CI never skips).

Typical use, one set of certificates per test session (per xdist worker)::

    @pytest.fixture(scope="session")
    def certificates(tmp_path_factory):
        return make_certificates(tmp_path_factory.mktemp("tls"))

    def test_trusted(sandbox, certificates):
        with stunnel(sandbox.port, certificates.server_cert, certificates.server_key) as url:
            requests.get(url + SANDBOX_WORLD_PATH, verify=str(certificates.ca))

No key content is ever printed: errors name files, never what is in them.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The names the good server certificate is valid for: what a test's URL may say.
SERVER_NAMES = ("localhost", "127.0.0.1")
# The only name the wrong-host certificate is valid for (a reserved, never-resolving domain).
WRONG_HOST = "wrong.example"
# How long stunnel may take to listen; it is ready in well under a second on a quiet machine.
STUNNEL_START_TIMEOUT = 10.0
STUNNEL_STOP_TIMEOUT = 5.0


@dataclass(frozen=True)
class Certificates:
    """The PEM files :func:`make_certificates` wrote. Every certificate but ``other_ca``'s is
    signed by ``ca``; every key is an unencrypted PKCS#8 file, readable by its owner only."""

    directory: Path
    #: the private CA: the bundle a client trusts (``verify=``, ``AUTHZKIT_TLS_CA_FILE``)
    ca: Path
    #: a server certificate for ``localhost`` and ``127.0.0.1`` (SAN DNS and IP), and its key
    server_cert: Path
    server_key: Path
    #: a client certificate for mutual TLS (extended key usage clientAuth), and its key
    client_cert: Path
    client_key: Path
    #: a valid key that is not ``client_cert``'s (a key file swapped by mistake)
    mismatched_client_key: Path
    #: a server certificate for the same names that expired yesterday, and its key
    expired_cert: Path
    expired_key: Path
    #: a server certificate for ``wrong.example`` only, and its key
    wrong_host_cert: Path
    wrong_host_key: Path
    #: a second CA, unrelated to ``ca``: trusting it alone, nothing here is trusted
    other_ca: Path


@dataclass(frozen=True)
class _Issuer:
    """A CA that signs: its name and key."""

    name: x509.Name
    key: ec.EllipticCurvePrivateKey


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "authzkit tests"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _validity(expired: bool) -> tuple[datetime.datetime, datetime.datetime]:
    """From a little in the past (clocks disagree by a few seconds) to a day ahead, or, when
    ``expired``, a window that closed yesterday."""
    now = datetime.datetime.now(datetime.UTC)
    if expired:
        return now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)
    return now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1)


def _make_ca(common_name: str) -> tuple[_Issuer, x509.Certificate]:
    """A self-signed root CA with the extensions strict verifiers require (Python 3.13's
    default context sets VERIFY_X509_STRICT): critical basic constraints and key usage, and
    a subject key identifier."""
    key = _new_key()
    name = _name(common_name)
    not_before, not_after = _validity(expired=False)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _Issuer(name, key), certificate


def _make_leaf(
    issuer: _Issuer,
    common_name: str,
    *,
    names: tuple[str, ...] = (),
    usage: x509.ObjectIdentifier,
    expired: bool = False,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A key and an end-entity certificate signed by ``issuer``, for ``usage`` (serverAuth
    or clientAuth); ``names`` go in the subject alternative name (an IP address as an IP
    entry: clients match an IP URL against those only)."""
    key = _new_key()
    not_before, not_after = _validity(expired)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(issuer.name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.public_key()),
            critical=False,
        )
    )
    if names:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([_general_name(name) for name in names]), critical=False
        )
    return key, builder.sign(issuer.key, hashes.SHA256())


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _write_certificate(path: Path, certificate: x509.Certificate) -> Path:
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> Path:
    """An unencrypted PKCS#8 PEM key, mode 0600 (what a real deployment's key file is)."""
    path.touch(mode=0o600)
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def make_certificates(directory: Path) -> Certificates:
    """Make a private CA, the certificates signed by it (server, client, expired, wrong
    host), a key matching none of them and an unrelated CA; write them as PEM files into
    ``directory`` (created if missing) and return their paths. Call it once per session:
    ``make_certificates(tmp_path_factory.mktemp("tls"))``."""
    directory.mkdir(parents=True, exist_ok=True)
    issuer, ca = _make_ca("authzkit test CA")
    _, other_ca = _make_ca("authzkit unrelated CA")
    server_auth, client_auth = ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH
    server_key, server = _make_leaf(issuer, "localhost", names=SERVER_NAMES, usage=server_auth)
    client_key, client = _make_leaf(issuer, "authzkit test client", usage=client_auth)
    expired_key, expired = _make_leaf(
        issuer, "localhost", names=SERVER_NAMES, usage=server_auth, expired=True
    )
    wrong_key, wrong = _make_leaf(issuer, WRONG_HOST, names=(WRONG_HOST,), usage=server_auth)
    return Certificates(
        directory=directory,
        ca=_write_certificate(directory / "ca.pem", ca),
        server_cert=_write_certificate(directory / "server.pem", server),
        server_key=_write_key(directory / "server.key", server_key),
        client_cert=_write_certificate(directory / "client.pem", client),
        client_key=_write_key(directory / "client.key", client_key),
        mismatched_client_key=_write_key(directory / "mismatched-client.key", _new_key()),
        expired_cert=_write_certificate(directory / "expired.pem", expired),
        expired_key=_write_key(directory / "expired.key", expired_key),
        wrong_host_cert=_write_certificate(directory / "wrong-host.pem", wrong),
        wrong_host_key=_write_key(directory / "wrong-host.key", wrong_key),
        other_ca=_write_certificate(directory / "other-ca.pem", other_ca),
    )


# -- stunnel: a TLS terminator nobody here wrote ---------------------------------------------


def stunnel_executable() -> str:
    """The path of Debian's ``stunnel4`` (or an upstream ``stunnel``); skips the calling test,
    saying why, when neither is installed."""
    found = shutil.which("stunnel4") or shutil.which("stunnel")
    if found is None:
        pytest.skip("stunnel4 is not installed (apt-get install stunnel4; .ci/run does)")
    return found


def _free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago (another process may take it before
    stunnel binds it: :func:`stunnel` then tries once more)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(port: int, backend_port: int, cert: Path, key: Path, client_ca: Path | None) -> str:
    """stunnel's configuration (options as its manual, stunnel(8), names them): one service
    from 127.0.0.1:``port`` to the backend, in the foreground, no pid file, logging to stderr
    only; with ``client_ca``, a client certificate signed by it is required."""
    lines = [
        "foreground = yes",
        "pid =",
        "syslog = no",
        "debug = notice",
        "[https]",
        f"accept = 127.0.0.1:{port}",
        f"connect = 127.0.0.1:{backend_port}",
        f"cert = {Path(cert).resolve()}",
        f"key = {Path(key).resolve()}",
    ]
    if client_ca is not None:
        lines += ["verifyChain = yes", "requireCert = yes", f"CAfile = {Path(client_ca).resolve()}"]
    return "\n".join(lines) + "\n"


class StunnelError(RuntimeError):
    """stunnel did not start: its exit code and its own log say why; ``port_taken`` when
    another process bound its port first."""

    def __init__(self, message: str, *, port_taken: bool) -> None:
        super().__init__(message)
        self.port_taken = port_taken


def _wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Return once 127.0.0.1:``port`` accepts connections; a :class:`StunnelError` with
    stunnel's log when it exits first or the deadline passes."""
    deadline = time.monotonic() + STUNNEL_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    code = process.poll()
    state = f"exited with code {code}" if code is not None else "did not listen in time"
    output = log.read_text(errors="replace")
    raise StunnelError(
        f"stunnel on 127.0.0.1:{port} {state}; its log:\n{output}",
        port_taken="Address already in use" in output,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process`` and wait for it; kill it if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STUNNEL_STOP_TIMEOUT)
            return
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait(STUNNEL_STOP_TIMEOUT)


def _start(
    executable: str, folder: Path, backend_port: int, cert: Path, key: Path, client_ca: Path | None
) -> tuple[subprocess.Popen[bytes], int]:
    """stunnel listening on a free port: the process and its port. Its log goes to a file,
    not a pipe: a pipe nobody reads would fill and stall stunnel mid-test."""
    port = _free_port()
    conf = folder / f"stunnel-{port}.conf"
    conf.write_text(_config(port, backend_port, cert, key, client_ca))
    log = folder / f"stunnel-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [executable, str(conf)], stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    try:
        _wait_listening(process, port, log)
    except BaseException:
        _stop(process)
        raise
    return process, port


@contextmanager
def stunnel(
    backend_port: int, cert: Path, key: Path, *, client_ca: Path | None = None
) -> Iterator[str]:
    """Debian's ``stunnel4`` terminating TLS with ``cert``/``key`` on a free port of
    127.0.0.1 and forwarding plain HTTP to 127.0.0.1:``backend_port``; yields
    ``https://localhost:<port>`` (a name the server certificate of :func:`make_certificates`
    holds). With ``client_ca``, the handshake requires a client certificate signed by that
    CA (mutual TLS). stunnel is stopped on exit, whatever happened. Skips the test when
    stunnel is not installed; raises :class:`StunnelError`, with stunnel's log, when it does
    not start (a port taken meanwhile is tried once more on another)."""
    executable = stunnel_executable()
    with tempfile.TemporaryDirectory(prefix="authzkit-stunnel-") as name:
        folder = Path(name)
        try:
            process, port = _start(executable, folder, backend_port, cert, key, client_ca)
        except StunnelError as exc:
            if not exc.port_taken:
                raise
            process, port = _start(executable, folder, backend_port, cert, key, client_ca)
        try:
            yield f"https://localhost:{port}"
        finally:
            _stop(process)


__all__ = [
    "SERVER_NAMES",
    "WRONG_HOST",
    "Certificates",
    "StunnelError",
    "make_certificates",
    "stunnel",
    "stunnel_executable",
]
