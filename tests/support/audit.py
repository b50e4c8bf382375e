"""The secrets audit's kit, shared by its two test files: configure recognizable secrets,
run everything, find none of them anywhere.

A sandbox PROCESS serves a world whose client secret, PIN, password and TOTP secret are
recognizable strings; every user-facing entry point then runs against it in real-environment
mode (the four ``AUTHZKIT_*`` variables plus a minted subject token): the demo, each CLI
command, traces, a load test with its report, and every notebook. Each byte those runs leave
behind (stdout, stderr, trace files, load-test output, executed notebooks with their widget
state) is searched for the secrets and for anything shaped like a JWT or JWE. The sandbox's
own startup banner is left out: printing the demo credentials is its documented job.

The audit runs on both dialects. In the published one the users authenticate with
``private_key_jwt`` (``AUTHZKIT_ISSUER``, ``AUTHZKIT_CLIENT_AUTH``,
``AUTHZKIT_CLIENT_KEY_FILE``) with a client key made here, so the key is a secret searched
for too: its PEM, each base64 line of the PEM's body, its JWK private members, and the
client assertions it signs (their fixed start: the header, and the claims up to the first
that changes between two assertions). Secrets are found with :func:`tests.leaks.shows`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from authzkit.client.credentials import ClientCredentials
from authzkit.sandbox.process import SandboxProcess
from authzkit.sandbox.world import World
from authzkit.wire.jwe import KeyPair
from authzkit.wire.spec import OIDC_TOKEN_PATH

from support.leaks import shows

REPO = Path(__file__).resolve().parents[2]
CLIENT_SECRET = "AUDIT-client-secret-5ee1c0de"
PIN = "7392046158"
PASSWORD = "AUDIT-password-correct-horse"
TOTP_SECRET = "AUDITAUDITAUDITAUDITAUDITAUDITAU"
# Every JWT and JWE starts with a base64url JSON header: '{"' encodes as 'eyJ'.
TOKEN_SHAPED = re.compile(r"eyJ[\w-]{8,}\.[\w-]+\.")
PEM_BLOCK = "PRIVATE KEY-----"


@dataclass(frozen=True)
class Audit:
    """One dialect's audit set-up; what holds secrets stays out of its repr (a failing
    test prints its arguments)."""

    dialect: str
    work: Path
    resource_id: str
    env: dict[str, str] = field(repr=False)
    subject_token: str = field(repr=False)
    secrets: list[str] = field(repr=False)


def audit_world(client_key_pem: str | None = None) -> dict[str, Any]:
    world = World.default().to_json()
    for client in world["clients"]:
        if client["resource_server"]:
            client["client_secret"] = CLIENT_SECRET
            client.pop("generate_key", None)
            if client_key_pem is not None:
                client["client_key_pem"] = client_key_pem
    for subject in world["subjects"]:
        if subject["id"] == "alice":
            subject["credentials"] = {"pin": PIN, "login_password": PASSWORD, "totp": TOTP_SECRET}
    return world


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unbase64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _integer(value: int) -> str:
    """A JWK member's spelling of an RSA number (RFC 7518: big-endian, base64url)."""
    return _base64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))


def client_key_secrets(pem: str) -> list[str]:
    """The PEM, each base64 line of its body, and the private members of its JWK."""
    lines = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    key = load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, RSAPrivateKey), f"the client key is not RSA: {type(key).__name__}"
    numbers = key.private_numbers()
    members = [numbers.d, numbers.p, numbers.q, numbers.dmp1, numbers.dmq1, numbers.iqmp]
    return [pem, *lines, *(_integer(n) for n in members)]


def _frozen(at: float) -> Callable[[], float]:
    return lambda: at


def assertion_stems(pem: str, client_id: str, audience: str) -> list[str]:
    """What every client assertion signed with ``pem`` for ``audience`` starts with: its
    header, and header + the claims up to the first that varies (a time), as base64url."""
    signed = [
        ClientCredentials(
            client_id=client_id, method="private_key_jwt", client_key=pem, clock=_frozen(at)
        ).assertion(audience)
        for at in (1_000_000_000.0, 1_900_000_000.0)
    ]
    header = signed[0].split(".")[0]
    claims = [_unbase64url(token.split(".")[1]) for token in signed]
    same = next(
        (i for i, (a, b) in enumerate(zip(*claims, strict=False)) if a != b), min(map(len, claims))
    )
    common = claims[0][:same]
    stem = _base64url(common[: len(common) // 3 * 3])  # whole base64 groups only
    assert audience.encode() in common and len(stem) > 40, "no distinctive assertion start"
    return [header, f"{header}.{stem}"]


def audit_environment(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audit]:
    """A sandbox process on the audit world in ``dialect``, and the environment a user
    would set (published: ``private_key_jwt`` with a client key made for the audit)."""
    root = tmp_path_factory.mktemp(f"audit-{dialect}")
    pem = KeyPair.generate(use="sig", size=2048).private_pem() if dialect == "published" else None
    world_file = root / "world.json"
    world_file.write_text(json.dumps(audit_world(pem)))
    with SandboxProcess(
        world=world_file,
        log=root / "sandbox-banner.log",
        dialect=dialect,
        client_key=pem is not None,
    ) as sandbox:
        admin = sandbox.admin()
        subject_token = admin.session_token("alice", ttl=3600)
        resource_id = next(r["id"] for r in admin.world()["resources"] if r["owner"] == "alice")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
        env.update(sandbox.env())
        env.update(
            {
                "AUTHZKIT_SUBJECT_TOKEN": subject_token,
                "AUTHZKIT_RESOURCE_ID": resource_id,
                "AUTHZKIT_ANSWER_PIN": PIN,
                "AUTHZKIT_PLAIN_ACTION": "show_account_balance_public",
                "AUTHZKIT_CHALLENGE_ACTION": "transfer_funds",
                "PYTHONUNBUFFERED": "1",
            }
        )
        assert env["AUTHZKIT_CLIENT_SECRET"] == CLIENT_SECRET
        secrets = [CLIENT_SECRET, PIN, PASSWORD, TOTP_SECRET, subject_token]
        if pem is not None:
            assert sandbox.issuer is not None
            assert env["AUTHZKIT_CLIENT_AUTH"] == "private_key_jwt"
            assert Path(env["AUTHZKIT_CLIENT_KEY_FILE"]).read_text() == pem
            secrets += client_key_secrets(pem)
            for audience in (sandbox.issuer, sandbox.issuer + OIDC_TOKEN_PATH):
                secrets += assertion_stems(pem, sandbox.client_id, audience)
        work = root / "work"
        work.mkdir()
        yield Audit(dialect, work, resource_id, env, subject_token, secrets)


def run(audit: Audit, *args: str, timeout: float = 180) -> str:
    """Run ``authzkit ARGS`` as a user would; return everything it printed."""
    result = subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        env=audit.env,
        cwd=audit.work,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"authzkit {' '.join(args)} failed:\n{output[-2000:]}"
    return output


def assert_clean(where: str, text: str, secrets: list[str]) -> None:
    for number, secret in enumerate(secrets):
        assert not shows(secret, text), f"configured secret #{number} appears in {where}"
    assert PEM_BLOCK not in text, f"a private key appears in {where}"
    match = TOKEN_SHAPED.search(text)
    assert match is None, f"a token-shaped string appears in {where}: {match.group(0)[:12]}…"


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

__all__ = ["NOTEBOOKS", "PIN", "Audit", "assert_clean", "audit_environment", "run"]
