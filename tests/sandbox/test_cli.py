"""``authzkit sandbox`` as a user runs it: a subprocess, a ready file, Ctrl-C, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow

COMMAND = [sys.executable, "-m", "authzkit", "sandbox"]


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], dict[str, object]]:
    ready_file = tmp_path / "ready.json"
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--key-size", "2048", "--ready-file", str(ready_file),
         *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not ready_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"sandbox did not start: {process.communicate()}")
        time.sleep(0.05)
    return process, json.loads(ready_file.read_text())


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_the_command_serves_until_a_signal_and_exits_0(tmp_path: Path,
                                                       stop_signal: int) -> None:
    process, ready = _start(tmp_path, "--token-ttl", "5")
    try:
        assert set(ready) == {"base_url", "auth_url", "issuer", "dialect", "client_id",
                              "client_secret", "pid"}
        assert (ready["dialect"], ready["issuer"]) == ("draft", None)
        assert ready["pid"] == process.pid
        assert ready["client_id"] == "authzkit-demo"
        response = requests.post(f"{ready['base_url']}/api/v3.1/oauth/tokens", json={
            "clientId": ready["client_id"], "clientSecret": ready["client_secret"]}, timeout=5)
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
    result = subprocess.run([*COMMAND, "--port", "0", "--world", str(world)],
                            capture_output=True, text=True, timeout=30)
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
