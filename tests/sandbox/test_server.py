"""The in-process ``Sandbox``: start/stop, addresses, safety of repr, use under a running loop."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest
import requests

from authzkit.sandbox import Sandbox
from authzkit.sandbox.state import ChallengeStore
from authzkit.wire.errors import ConfigError


def test_the_session_sandbox_is_ready_and_safe_to_print(sandbox: Sandbox) -> None:
    assert sandbox.running
    assert sandbox.auth_url == sandbox.base_url.rstrip("/")
    assert sandbox.base_url.startswith("http://127.0.0.1:")
    assert sandbox.client_id == "authzkit-demo"
    assert sandbox.client_secret == "sandbox-demo-secret"
    assert "sandbox-demo-secret" not in repr(sandbox)
    assert "sandbox-demo-secret" not in str(sandbox)


def test_a_sandbox_starts_inside_a_running_event_loop() -> None:
    """A Jupyter kernel already runs a loop in its main thread; the sandbox must not care."""

    async def inside_a_loop() -> int:
        with Sandbox(key_size=2048) as sandbox:
            response = await asyncio.to_thread(
                requests.get, sandbox.base_url + "/api/v1/discovery/keys", timeout=5
            )
            return response.status_code

    assert asyncio.run(inside_a_loop()) == 200


def test_stop_frees_the_port_and_is_idempotent() -> None:
    sandbox = Sandbox(key_size=2048).start()
    port = sandbox.port
    sandbox.stop()
    sandbox.stop()
    assert not sandbox.running
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/sandbox/v1/stats", timeout=2)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # nobody holds it any more


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        with pytest.raises(ConfigError, match="cannot listen"):
            Sandbox(key_size=2048, port=holder.getsockname()[1]).start()


@pytest.mark.parametrize(
    "options", [{"token_ttl": 0}, {"challenge_ttl": 0}, {"max_attempts": 0}, {"port": 70000}]
)
def test_bad_options_are_refused_before_starting(options: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        Sandbox(**options)  # type: ignore[arg-type]


def test_a_bad_key_size_is_refused() -> None:
    with pytest.raises(ConfigError, match="key size"):
        Sandbox(key_size=1024).start()


def test_session_tokens_need_a_started_sandbox() -> None:
    with pytest.raises(ConfigError, match="not started"):
        Sandbox().session_token("alice")


def test_the_challenge_store_is_bounded_and_evicts_expired_challenges() -> None:
    now = [0.0]
    store = ChallengeStore(clock=lambda: now[0], ttl=10, max_attempts=3, capacity=5)
    first = store.issue("alice", "transfer_funds", "r", ("pin",))
    for _ in range(9):
        store.issue("alice", "transfer_funds", "r", ("pin",))
    assert len(store) == 5
    assert store.find(first.id, "alice", "transfer_funds", "r") is None
    now[0] = 11
    store.issue("alice", "transfer_funds", "r", ("pin",))
    assert len(store) == 1


def test_importing_the_sandbox_package_stays_light() -> None:
    code = (
        "import sys, authzkit.sandbox; "
        "print(sorted(m for m in ('starlette', 'uvicorn') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip() == "[]"


def test_an_unknown_subject_is_a_config_error_naming_the_known_ones(sandbox: Sandbox) -> None:
    with pytest.raises(ConfigError, match="no subject 'mallory' \\(known: alice, bob\\)"):
        sandbox.session_token("mallory")
