"""``authzkit sandbox`` as a user runs it: a subprocess, a ready file, Ctrl-C, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests

from authzkit.sandbox.process import SandboxProcess
from authzkit.sandbox.world import World
from authzkit.wire import jwe
from authzkit.wire.errors import ConfigError

pytestmark = pytest.mark.slow

COMMAND = [sys.executable, "-m", "authzkit", "sandbox"]


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    ready_file = tmp_path / "ready.json"
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--key-size", "2048", "--ready-file", str(ready_file), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not ready_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"sandbox did not start: {process.communicate()}")
        time.sleep(0.05)
    return process, json.loads(ready_file.read_text())


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_the_command_serves_until_a_signal_and_exits_0(tmp_path: Path, stop_signal: int) -> None:
    process, ready = _start(tmp_path, "--token-ttl", "5")
    try:
        assert set(ready) == {
            "base_url",
            "auth_url",
            "issuer",
            "dialect",
            "client_id",
            "client_secret",
            "pid",
        }
        assert (ready["dialect"], ready["issuer"]) == ("draft", None)
        assert ready["pid"] == process.pid
        assert ready["client_id"] == "authzkit-demo"
        response = requests.post(
            f"{ready['base_url']}/api/v3.1/oauth/tokens",
            json={"clientId": ready["client_id"], "clientSecret": ready["client_secret"]},
            timeout=5,
        )
        assert response.json()["expiresIn"] == 5
    finally:
        process.send_signal(stop_signal)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert ready["base_url"] in out and "authzkit-demo" in out
    assert "stopped" in out
    assert "Traceback" not in err


def test_a_broken_world_file_exits_2_naming_the_problem(tmp_path: Path) -> None:
    world = tmp_path / "world.toml"
    world.write_text('[[clients]]\nclient_id = "x"\n')
    result = subprocess.run(
        [*COMMAND, "--port", "0", "--world", str(world)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert "clients[0].client_secret" in result.stderr and str(world) in result.stderr
    assert "Traceback" not in result.stderr


def test_no_access_log_lines_reach_the_terminal(tmp_path: Path) -> None:
    process, ready = _start(tmp_path)
    try:
        requests.get(f"{ready['base_url']}/api/v1/discovery/keys", timeout=5)
    finally:
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert "GET /api/v1/discovery/keys" not in out + err


def test_the_published_dialect_writes_its_issuer_and_the_client_key_file(tmp_path: Path) -> None:
    key_file = tmp_path / "keys" / "client.pem"
    key_file.parent.mkdir()
    key_file.write_text("an older file, world-readable")
    key_file.chmod(0o644)
    process, ready = _start(tmp_path, "--dialect", "published", "--client-key-out", str(key_file))
    try:
        assert ready["dialect"] == "published"
        assert ready["issuer"] == f"{ready['base_url']}/auth/realms/authzkit"
        assert ready["client_key_file"] == str(key_file)
        pem = key_file.read_text()
        assert pem.startswith("-----BEGIN PRIVATE KEY-----")
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        world = requests.get(f"{ready['base_url']}/sandbox/v1/world", timeout=5).json()
        assert world["clients"][0]["client_key_pem"] == pem
        document = requests.get(
            f"{ready['issuer']}/.well-known/openid-configuration", timeout=5
        ).json()
        assert document["issuer"] == ready["issuer"]
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert ready["issuer"] in out and str(key_file) in out
    assert "PRIVATE KEY" not in out + err  # the key goes to its file only


def test_client_key_out_without_a_private_key_exits_2(tmp_path: Path) -> None:
    world = tmp_path / "world.json"
    data = World.default().to_json()
    data["clients"] = [{"client_id": "c", "client_secret": "s", "resource_server": True}]
    world.write_text(json.dumps(data))
    result = subprocess.run(
        [
            *COMMAND,
            "--port",
            "0",
            "--world",
            str(world),
            "--client-key-out",
            str(tmp_path / "k.pem"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "--client-key-out" in result.stderr and "no private key" in result.stderr
    assert not (tmp_path / "k.pem").exists()


def test_a_sandbox_process_in_the_published_dialect(tmp_path: Path) -> None:
    with SandboxProcess(dialect="published", token_ttl=30) as sandbox:
        assert sandbox.issuer == f"{sandbox.base_url}/auth/realms/authzkit"
        key_file = sandbox.client_key_file
        assert key_file is not None and stat.S_IMODE(key_file.stat().st_mode) == 0o600
        env = sandbox.env()
        assert env["AUTHZKIT_ISSUER"] == sandbox.issuer
        assert env["AUTHZKIT_CLIENT_AUTH"] == "private_key_jwt"
        assert env["AUTHZKIT_CLIENT_KEY_FILE"] == str(key_file)
        signer = jwe.ClientKey.load(key_file)
        now = int(time.time())
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": signer.sign(
                {
                    "iss": sandbox.client_id,
                    "sub": sandbox.client_id,
                    "aud": sandbox.issuer,
                    "exp": now + 60,
                    "jti": str(uuid.uuid4()),
                }
            ),
        }
        response = requests.post(
            f"{sandbox.issuer}/protocol/openid-connect/token", data=form, timeout=10
        )
        assert response.json()["expires_in"] == 30
        assert "dialect='published'" in repr(sandbox)
    assert not key_file.exists()  # removed with the process's temporary files
    with SandboxProcess() as draft:
        assert draft.issuer is None and draft.client_key_file is None
        assert "AUTHZKIT_ISSUER" not in draft.env()


def test_a_sandbox_process_refuses_an_unknown_dialect() -> None:
    with pytest.raises(ConfigError, match="dialect must be one of draft, published"):
        SandboxProcess(dialect="keycloak")
    with pytest.raises(ConfigError, match="client_auth must be one of"):
        SandboxProcess(dialect="published", client_auth="mtls")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--pause-every", "5"], "--pause-ms is required with --pause-every"),
        (["--pause-ms", "500"], "--pause-every is required with --pause-ms"),
        (["--pause-every", "0", "--pause-ms", "500"], "--pause-every: must be a positive number"),
        (["--pause-every", "5", "--pause-ms", "-1"], "--pause-ms: must be a positive number"),
        (["--pause-every", "5", "--pause-ms", "5000"], "--pause-ms must be shorter than the"),
    ],
)
def test_bad_pause_options_exit_2_naming_the_option(flags: list[str], message: str) -> None:
    result = subprocess.run(
        [*COMMAND, "--port", "0", *flags], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_pause_options_hold_spec_responses_and_show_in_the_banner(tmp_path: Path) -> None:
    # A ten-minute pause from start: a held response cannot come within the client's timeout.
    process, ready = _start(tmp_path, "--pause-every", "600", "--pause-ms", "599000")
    try:
        base = ready["base_url"]
        with pytest.raises(requests.ReadTimeout):
            requests.get(f"{base}/api/v1/discovery/keys", timeout=1)
        assert requests.get(f"{base}/sandbox/v1/stats", timeout=5).json()["keys_served"] == 1
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "faults:        pause 599000 ms every 600 s" in out
    assert "Traceback" not in err


def test_a_sandbox_process_passes_the_pause_on() -> None:
    with pytest.raises(ConfigError, match="pause_ms is required"):
        SandboxProcess(pause_every=5)  # refused before any process starts
    with SandboxProcess(pause_every=600, pause_ms=599_000) as sandbox:
        with pytest.raises(requests.ReadTimeout):
            requests.post(
                f"{sandbox.base_url}/resources/v1/authorization/actions/authorize",
                json={},
                timeout=1,
            )
        assert sandbox.admin().stats()["authorize"]  # answered by the endpoint, then held
