"""An independent, OpenID Certified provider on 127.0.0.1: panva's ``oidc-provider`` (npm).

:class:`CertifiedProvider` starts ``provider/server.mjs`` under Node with clients of every
token-endpoint authentication authzkit offers, and reads back what the provider saw
(``requests()``), so a test counts token calls and reads assertion headers on the
provider's side, not on ours. Given ``tls`` (a CA, a server certificate and key, and the
mutual-TLS clients of :func:`mtls_clients`), it serves HTTPS at ``https://localhost:<port>/``
and RFC 8705 client authentication on a second listener that asks for client certificates,
named in its discovery document's ``mtls_endpoint_aliases``. ``oidc-provider`` comes from
``provider/package-lock.json`` (``npm ci``; ``.ci/run`` installs it, and
:func:`installed_provider` does once if missing). Without Node the tests skip with the
reason — except under ``CI``, where that is a failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from authzkit.wire import jwe

# The Node project (server.mjs, its package.json; .ci/run installs it) stays with the tests.
HERE = Path(__file__).resolve().parents[1] / "interop" / "provider"
RESOURCE = "https://api.interop.test/"
SCOPES = "read write"
TOKEN_TTL = 8  # seconds: short, so a refresh ahead of expiry is reached by a clock jump
START_TIMEOUT_S = 30.0


def unavailable(reason: str) -> None:
    """Skip with ``reason`` on a developer's machine; fail under CI, where it must run."""
    if os.environ.get("CI"):
        pytest.fail(f"interop provider unavailable under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def installed_provider() -> tuple[str, Path]:
    """``(node, server.mjs)``, installing ``oidc-provider`` from the lock file if needed: once,
    while the other pytest-xdist workers that need it too wait for that install."""
    node = shutil.which("node")
    if node is None:
        unavailable("node is not installed (the certified provider runs on Node.js)")
    npm_installed(HERE, HERE / "node_modules" / "oidc-provider", "oidc-provider")
    return str(node), HERE / "server.mjs"


def npm_installed(project: Path, installed: Path, name: str) -> None:
    """``npm ci`` in ``project`` unless ``installed`` exists: once, while the other
    pytest-xdist workers that need it too wait for that install; else :func:`unavailable`."""
    with (project / "package-lock.json").open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two npm ci in one folder break each other's files
        if not installed.exists():
            npm = shutil.which("npm")
            done = (
                npm is not None
                and subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(project)],
                    capture_output=True,
                    timeout=300,
                    check=False,
                ).returncode
                == 0
            )
            if not done:
                unavailable(f"{name} is not installed: run npm ci --prefix {project}")


@dataclass
class Keys:
    """The interop clients' keys: one registered with a ``kid``, one without."""

    named: Any = field(repr=False)
    unnamed: Any = field(repr=False)
    KID = "interop-key-1"

    @classmethod
    def generate(cls) -> Keys:
        return cls(
            jwe.KeyPair.generate(use="sig", size=2048, kid=cls.KID),
            jwe.KeyPair.generate(use="sig", size=2048),
        )

    def registered(self, pair: Any, *, with_kid: bool) -> dict[str, Any]:
        """The public JWK a client registers (``kid`` only ``with_kid``)."""
        public = {k: v for k, v in pair.public_jwk().items() if k in ("kty", "n", "e")}
        return {**public, "kid": pair.kid} if with_kid else public


SECRETS = {
    "post": "interop-post-secret-0123456789abcdef",
    "basic": "interop-basic-secret:with/odd+chars%",
    "secret-jwt": "interop-hs256-secret-0123456789abcdef0123",
}


def clients(keys: Keys) -> list[dict[str, Any]]:
    """One client per authentication method, plus a private_key_jwt client registered
    without a ``kid`` (what strict providers then refuse a ``kid`` for)."""
    common = {
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
        "response_types": [],
        "scope": SCOPES,
    }
    return [
        {
            **common,
            "client_id": "post",
            "client_secret": SECRETS["post"],
            "token_endpoint_auth_method": "client_secret_post",
        },
        {
            **common,
            "client_id": "basic",
            "client_secret": SECRETS["basic"],
            "scope": "read",
            "token_endpoint_auth_method": "client_secret_basic",
        },
        {
            **common,
            "client_id": "secret-jwt",
            "client_secret": SECRETS["secret-jwt"],
            "token_endpoint_auth_method": "client_secret_jwt",
        },
        {
            **common,
            "client_id": "key-jwt",
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": {"keys": [keys.registered(keys.named, with_kid=True)]},
        },
        {
            **common,
            "client_id": "key-jwt-no-kid",
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": {"keys": [keys.registered(keys.unnamed, with_kid=False)]},
        },
    ]


@dataclass(frozen=True)
class ProviderTls:
    """What an HTTPS provider serves with: its certificate and key, and the CA that clients
    trust and that it verifies client certificates against (paths of PEM files)."""

    ca: Path
    cert: Path
    key: Path


def mtls_clients(subject_dn: str, self_signed_jwk: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The RFC 8705 clients: ``mtls`` registered with the client certificate's subject DN,
    ``mtls-other`` with another subject (the same certificate is not its), and
    ``mtls-self-signed`` with a self-signed certificate in its ``jwks`` (``x5c``)."""
    common = {
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
        "response_types": [],
        "scope": SCOPES,
    }
    return [
        {
            **common,
            "client_id": "mtls",
            "token_endpoint_auth_method": "tls_client_auth",
            "tls_client_auth_subject_dn": subject_dn,
        },
        {
            **common,
            "client_id": "mtls-other",
            "token_endpoint_auth_method": "tls_client_auth",
            "tls_client_auth_subject_dn": "CN=someone else,O=authzkit tests",
        },
        {
            **common,
            "client_id": "mtls-self-signed",
            "token_endpoint_auth_method": "self_signed_tls_client_auth",
            "jwks": {"keys": [dict(self_signed_jwk)]},
        },
    ]


class CertifiedProvider:
    """A running ``oidc-provider`` whose issuer ends in ``/`` (as Auth0-style issuers do).

    With ``tls``: HTTPS at ``https://localhost:<port>/`` (``ca`` is what clients trust),
    ``extra_clients`` registered too (:func:`mtls_clients`), and ``mtls_origin`` the
    listener that asks for client certificates (its ``/token`` is the discovery document's
    ``mtls_endpoint_aliases.token_endpoint``)."""

    def __init__(
        self,
        keys: Keys,
        *,
        tls: ProviderTls | None = None,
        extra_clients: list[dict[str, Any]] | None = None,
    ) -> None:
        node, server = installed_provider()
        scheme, host = ("https", "localhost") if tls else ("http", "127.0.0.1")
        config: dict[str, Any] = {
            "issuer": f"{scheme}://{host}:{{port}}/",
            "clients": clients(keys) + list(extra_clients or []),
            "ttl": TOKEN_TTL,
            "scopes": SCOPES,
            "resources": [RESOURCE],
        }
        if tls:
            config["tls"] = {"ca": str(tls.ca), "cert": str(tls.cert), "key": str(tls.key)}
        self.ca: str | bool = str(tls.ca) if tls else True
        self._process = subprocess.Popen(
            [node, str(server)],
            cwd=HERE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "INTEROP_PROVIDER_CONFIG": json.dumps(config)},
            text=True,
        )
        ports = self._wait_ready()
        self.port = ports[0]
        self.origin = f"{scheme}://{host}:{self.port}"
        self.issuer = self.origin + "/"
        self.token_endpoint = self.origin + "/token"
        self.mtls_origin = f"{scheme}://{host}:{ports[1]}" if len(ports) > 1 else None

    def _wait_ready(self) -> list[int]:
        assert self._process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self._process.stdout], [], [], 0.2)
            if ready:
                line = self._process.stdout.readline()
                if line.startswith("ready "):
                    return [int(port) for port in line.split()[1:]]
            if self._process.poll() is not None:
                break
        self._end()
        stderr = self._process.stderr.read() if self._process.stderr else ""
        self.stop()
        raise RuntimeError(f"oidc-provider did not start: {stderr[-2000:]}")

    def requests(self) -> list[dict[str, Any]]:
        """Every request the provider answered so far, oldest first."""
        return list(
            requests.get(self.origin + "/__interop/requests", timeout=10, verify=self.ca).json()
        )

    def token_calls(self, client_id: str | None = None) -> list[dict[str, Any]]:
        """The token requests it answered (of ``client_id`` when given)."""
        return [
            r
            for r in self.requests()
            if r["path"] == "/token" and (client_id is None or r.get("client_id") == client_id)
        ]

    def stop(self) -> None:
        self._end()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def _end(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def claims_of(jwt: str) -> Mapping[str, Any]:
    """The claims of a compact JWT (an access token the provider issued), unverified."""
    import base64

    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``authzkit ARGS`` with only ``env``'s AUTHZKIT_* variables set."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
