"""The plugin's sandbox over HTTPS: a partner team tests its own HTTPS client against it, with
certificates of its own CA, given by marker or by ini keys; bad TLS files are one line."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.sandbox import Sandbox

from support.tls import Certificates

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"


@pytest.fixture
def certs(partner: pytest.Pytester, certificates: Certificates) -> Path:
    """The partner's own copy of the certificates, in ``certs/`` beside its tests."""
    folder = partner.path / "certs"
    shutil.copytree(certificates.directory, folder)
    return folder


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


# What the partner's tests check in either configuration: its own HTTPS client trusts its CA
# (and only that), and the plugin's fixtures reach the sandbox over HTTPS.
PARTNER_TESTS = f'''
import os

import pytest
import requests

from service import may_show_balance, service_from_env

ALICE_ACCOUNT = "{ALICE_ACCOUNT}"
HERE = os.path.dirname(__file__)
CA = os.path.join(HERE, "certs", "ca.pem")
OTHER_CA = os.path.join(HERE, "certs", "other-ca.pem")


def test_own_https_client(authz):
    assert authz.base_url.startswith("https://127.0.0.1:")
    assert requests.get(authz.base_url + "/sandbox/v1/world", verify=CA, timeout=5).ok
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(authz.base_url + "/sandbox/v1/world", verify=OTHER_CA, timeout=5)


def test_authz_client(authz, authz_client):
    assert may_show_balance(authz_client, authz.session_token("alice"), ALICE_ACCOUNT)
    assert authz.outcomes == ["authorized"]


def test_authz_env(authz, authz_env, monkeypatch):
    assert authz_env["AUTHZKIT_TLS_CA_FILE"] == CA
    authz_env.apply(monkeypatch)
    with service_from_env() as client:
        assert may_show_balance(client, authz.session_token("alice"), ALICE_ACCOUNT)
'''


def test_a_marker_makes_the_sandbox_serve_https(partner: pytest.Pytester, certs: Path) -> None:
    marker = (
        '@pytest.mark.authz(tls_cert="certs/server.pem", tls_key="certs/server.key", '
        'tls_ca="certs/ca.pem")'
    )
    tests = PARTNER_TESTS.replace("\ndef test_", f"\n{marker}\ndef test_")
    partner.makepyfile(
        test_partner=tests
        + """

def test_unmarked_tests_keep_plain_http(authz):
    assert authz.base_url.startswith("http://127.0.0.1:")
"""
    )
    run(partner).assert_outcomes(passed=4)


def test_ini_keys_make_every_sandbox_serve_https(partner: pytest.Pytester, certs: Path) -> None:
    partner.makeini("""
        [pytest]
        authz_tls_cert = certs/server.pem
        authz_tls_key = certs/server.key
        authz_tls_ca = certs/ca.pem
    """)
    partner.makepyfile(
        test_partner=PARTNER_TESTS
        + """

def test_authz_sandbox(authz_sandbox):
    assert authz_sandbox.base_url.startswith("https://")
"""
    )
    run(partner).assert_outcomes(passed=4)


def test_bad_tls_files_are_one_line_naming_the_setting_and_the_path(
    partner: pytest.Pytester, certs: Path
) -> None:
    partner.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.authz(tls_cert="certs/server.pem")
        def test_no_key(authz):
            pass

        @pytest.mark.authz(tls_cert="certs/server.pem", tls_key="certs/client.key")
        def test_not_its_key(authz):
            pass

        @pytest.mark.authz(tls_cert="certs/absent.pem", tls_key="certs/server.key")
        def test_no_such_certificate(authz):
            pass

        @pytest.mark.authz(tls_ca="certs/absent-ca.pem")
        def test_no_such_ca(authz):
            pass
    """
    )
    result = run(partner)
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_no_key*",
            "@pytest.mark.authz(tls_cert='certs/server.pem'): tls_key is missing: "
            "tls_cert needs it (give both, or neither)",
            "*ERROR at setup of test_not_its_key*",
            f"@pytest.mark.authz(*): tls_key: {certs}/client.key is not the key of the certificate "
            f"in tls_cert ({certs}/server.pem)",
            "*ERROR at setup of test_no_such_certificate*",
            f"@pytest.mark.authz(*): tls_cert: {certs}/absent.pem: no such file",
            "*ERROR at setup of test_no_such_ca*",
            f"@pytest.mark.authz(*): tls_ca: {certs}/absent-ca.pem: no such file",
        ]
    )
    output = result.stdout.str()
    assert "Traceback" not in output and "BEGIN" not in output


def test_an_ini_key_without_its_certificate_is_named(partner: pytest.Pytester, certs: Path) -> None:
    partner.makeini("""
        [pytest]
        authz_tls_key = certs/server.key
    """)
    partner.makepyfile(
        test_one="""
        def test_one(authz_sandbox):
            pass
    """
    )
    result = run(partner)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "authz settings: authz_tls_cert is missing: authz_tls_key needs it "
            "(give both, or neither)",
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.fixture(scope="module")
def running_https_sandbox(certificates: Certificates) -> Iterator[str]:
    """An HTTPS sandbox started elsewhere, as ``authzkit sandbox --tls-cert --tls-key`` is."""
    with Sandbox(
        key_size=2048, tls_cert=certificates.server_cert, tls_key=certificates.server_key
    ) as sandbox:
        yield sandbox.base_url


def test_authz_url_reaches_an_https_sandbox_trusting_authz_tls_ca(
    partner: pytest.Pytester, certs: Path, running_https_sandbox: str
) -> None:
    partner.makepyfile(
        test_partner=f'''
        from service import may_show_balance

        def test_through_the_running_sandbox(authz, authz_client):
            assert authz.base_url == "{running_https_sandbox}"
            assert may_show_balance(authz_client, authz.session_token("alice"),
                                    "{ALICE_ACCOUNT}")
    '''
    )
    trusting = run(partner, "--authz-url", running_https_sandbox, "-o", "authz_tls_ca=certs/ca.pem")
    trusting.assert_outcomes(passed=1)
    distrusting = run(
        partner, "--authz-url", running_https_sandbox, "-o", "authz_tls_ca=certs/other-ca.pem"
    )
    distrusting.assert_outcomes(errors=1)
    distrusting.stdout.fnmatch_lines(
        [
            f"authz sandbox: --authz-url {running_https_sandbox}: TLS with "
            f"{running_https_sandbox} failed: *not signed by a CA authzkit trusts*"
            f"(in pytest: the ini key authz_tls_ca)",
        ]
    )
