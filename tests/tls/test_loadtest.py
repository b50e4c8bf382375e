"""Every Locust user class over mutual TLS, through Debian's stunnel4 in front of an authzkit
sandbox: Locust's ``HttpUser`` (requests), the Fast users' and the open model's
geventhttpclient transport. Each trusts the private CA given one of the three ways and shows
the client certificate stunnel demands, in a Locust child process that runs in its own folder
(so the paths it is given must reach it whole)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.sandbox import Sandbox

from support.loadtest import AUTHORIZE_FILE, locust
from support.tls import Certificates, stunnel

RUNS = [
    ("AUTHZKIT_TLS_CA_FILE", ["AuthorizeUser", "FastChallengeUser"], []),
    ("REQUESTS_CA_BUNDLE", ["ChallengeUser", "FastAuthorizeUser"], []),
    ("SSL_CERT_FILE", ["OpenChallengeUser"], ["--rate", "20"]),
]


@pytest.fixture(scope="module")
def mutual_sandbox_url(certificates: Certificates) -> Iterator[str]:
    with Sandbox(key_size=2048) as sandbox:
        port = int(sandbox.base_url.rsplit(":", 1)[1])
        with stunnel(
            port, certificates.server_cert, certificates.server_key, client_ca=certificates.ca
        ) as url:
            yield url


@pytest.mark.slow
@pytest.mark.parametrize(("variable", "classes", "extra"), RUNS)
def test_every_user_class_shows_the_client_certificate_and_trusts_the_ca(
    variable: str,
    classes: list[str],
    extra: list[str],
    mutual_sandbox_url: str,
    certificates: Certificates,
    tmp_path: Path,
) -> None:
    env = {
        "REQUESTS_CA_BUNDLE": "",  # not the machine's own bundle: the one under test
        variable: str(certificates.ca),
        "AUTHZKIT_TLS_CERT_FILE": str(certificates.client_cert),
        "AUTHZKIT_TLS_KEY_FILE": str(certificates.client_key),
    }
    run = locust(
        AUTHORIZE_FILE,
        classes,
        host=mutual_sandbox_url,
        out=tmp_path,
        users=len(classes),
        run_time="2s",
        extra=extra,
        env=env,
    )
    run.assert_clean()
    sent = {name for (_, name), row in run.rows.items() if row["num_requests"]}
    assert "authorize" in sent and "token" in sent
    if any("Challenge" in name for name in classes):
        assert "authorize:solution" in sent
