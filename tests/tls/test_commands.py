"""Every command over HTTPS, through a TLS terminator nobody here wrote (Debian's stunnel4)
in front of an authzkit sandbox reached by its URL alone: the CA given each of the three ways,
a client certificate where the terminator demands one, and one line naming what TLS said and
the setting that fixes it when the handshake fails (never "no answer" or "is it up?")."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.sandbox import Sandbox

from support.loadtest import PACED
from support.tls import Certificates, stunnel

COMMANDS = (
    ["token"],
    ["keys"],
    ["authorize", "show_account_balance_public"],
    ["solve", "close_account"],
    ["demo"],
    ["matrix"],
    ["trace", "challenge", "--out", "-"],
    ["check", "--only", "authorize.*"],
)
CA_VARIABLES = ("AUTHZKIT_TLS_CA_FILE", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


@pytest.fixture(scope="module")
def backend() -> Iterator[Sandbox]:
    with Sandbox(key_size=2048) as sandbox:
        yield sandbox


def port_of(sandbox: Sandbox) -> int:
    return int(sandbox.base_url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def https(backend: Sandbox, certificates: Certificates) -> Iterator[str]:
    with stunnel(port_of(backend), certificates.server_cert, certificates.server_key) as url:
        yield url


@pytest.fixture(scope="module")
def mutual(backend: Sandbox, certificates: Certificates) -> Iterator[str]:
    with stunnel(
        port_of(backend),
        certificates.server_cert,
        certificates.server_key,
        client_ca=certificates.ca,
    ) as url:
        yield url


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No AUTHZKIT_* and no CA bundle of the machine running the tests (this one sets
    REQUESTS_CA_BUNDLE for its own proxy), no .env."""
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_") or n in CA_VARIABLES]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


@pytest.mark.parametrize("variable", CA_VARIABLES)
def test_every_command_runs_over_https_with_the_ca_given_any_way(
    variable: str,
    https: str,
    certificates: Certificates,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    clean.setenv("AUTHZKIT_BASE_URL", https)
    clean.setenv(variable, str(certificates.ca))
    for argv in COMMANDS:
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    out = capsys.readouterr().out
    assert "all 12 steps ended as expected" in out
    assert f"authzkit sandbox started elsewhere at {https}" in out


def test_mutual_tls_presents_the_client_certificate_on_every_call(
    mutual: str,
    certificates: Certificates,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    clean.setenv("AUTHZKIT_BASE_URL", mutual)
    clean.setenv("AUTHZKIT_TLS_CA_FILE", str(certificates.ca))
    assert main(["demo"]) == 1
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert f"TLS with {mutual} failed" in line
    assert "client certificate" in line and "AUTHZKIT_TLS_CERT_FILE" in line
    clean.setenv("AUTHZKIT_TLS_CERT_FILE", str(certificates.client_cert))
    clean.setenv("AUTHZKIT_TLS_KEY_FILE", str(certificates.client_key))
    for argv in COMMANDS:
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    shown = capsys.readouterr()
    key = certificates.client_key.read_text().splitlines()[1]
    assert key not in shown.out + shown.err


def failing_servers(certificates: Certificates) -> list[tuple[str, Path, Path, Path, str]]:
    """``(case, certificate, key, trusted CA, what the line must say)``."""
    return [
        (
            "untrusted",
            certificates.server_cert,
            certificates.server_key,
            certificates.other_ca,
            "not signed by a CA authzkit trusts (AUTHZKIT_TLS_CA_FILE=",
        ),
        (
            "expired",
            certificates.expired_cert,
            certificates.expired_key,
            certificates.ca,
            "certificate has expired",
        ),
        (
            "wrong host",
            certificates.wrong_host_cert,
            certificates.wrong_host_key,
            certificates.ca,
            "the certificate names another host",
        ),
    ]


@pytest.mark.parametrize("command", [["demo"], ["token"], ["loadtest", "-t", "1s"]])
def test_a_failed_handshake_is_one_line_saying_what_tls_said(
    command: list[str],
    backend: Sandbox,
    certificates: Certificates,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if command == ["token"]:  # a real environment's credentials: the token endpoint answers
        clean.setenv("AUTHZKIT_CLIENT_ID", backend.client_id)
        clean.setenv("AUTHZKIT_CLIENT_SECRET", backend.client_secret or "")
    for case, cert, key, trusted, said in failing_servers(certificates):
        with stunnel(port_of(backend), cert, key) as url:
            clean.setenv("AUTHZKIT_BASE_URL", url)
            clean.setenv("AUTHZKIT_TLS_CA_FILE", str(trusted))
            assert main([*command, "--out", "out"] if command[0] == "loadtest" else command) == 1
            line = capsys.readouterr().err
            assert line.count("\n") == 1, (case, line)
            assert f"TLS with {url} failed" in line and said in line, (case, line)
            assert "no answer" not in line and "is the service up" not in line


def test_insecure_is_named_on_every_command(
    https: str,
    certificates: Certificates,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    backend_url = "https://127.0.0.1:" + https.rsplit(":", 1)[1]
    clean.setenv("AUTHZKIT_BASE_URL", backend_url)  # the certificate names localhost
    clean.setenv("AUTHZKIT_TLS_INSECURE", "1")
    assert main(["authorize", "show_account_balance_public"]) == 0
    err = capsys.readouterr().err
    assert "AUTHZKIT_TLS_INSECURE is set: TLS certificates are NOT verified" in err


@pytest.mark.slow
def test_a_load_test_over_mutual_tls_records_its_trust_in_run_json(
    mutual: str,
    certificates: Certificates,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    clean.setenv("AUTHZKIT_BASE_URL", mutual)
    clean.setenv("SSL_CERT_FILE", str(certificates.ca))
    clean.setenv("AUTHZKIT_TLS_CERT_FILE", str(certificates.client_cert))
    clean.setenv("AUTHZKIT_TLS_KEY_FILE", str(certificates.client_key))
    argv = ["loadtest", "--fast", "-t", "2s", "--wait-time", PACED, "--no-report", "--out", "run"]
    assert main(argv) == 0, capsys.readouterr()
    meta = json.loads(Path("run/run.json").read_text())
    assert meta["tls"] == {
        "ca_file": str(certificates.ca),
        "ca_setting": "SSL_CERT_FILE",
        "client_certificate": str(certificates.client_cert),
        "insecure": False,
    }
    assert meta["sandbox_elsewhere"] is True
