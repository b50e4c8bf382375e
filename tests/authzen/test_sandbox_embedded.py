"""The AuthZEN sandbox as users start it: ``Sandbox(dialect="authzen")`` over real HTTP
(request ids, fault flags, stats) and ``authzkit sandbox --dialect authzen`` refusing bad
input with one line and exit 2 (in process: nothing starts)."""

from __future__ import annotations

import pytest
import requests

from authzkit.cli.main import main
from authzkit.sandbox.embedded import Sandbox
from authzkit.wire.errors import ConfigError

EVALUATION = {
    "subject": {"type": "user", "id": "alice"},
    "action": {"name": "read"},
    "resource": {"type": "record", "id": "record-1"},
}


def test_an_authzen_sandbox_answers_with_request_ids_and_counts_decisions() -> None:
    with Sandbox(dialect="authzen") as sandbox:
        url = f"{sandbox.base_url}/access/v1/evaluation"
        echoed = requests.post(url, json=EVALUATION, headers={"X-Request-ID": "r-1"}, timeout=5)
        assert (echoed.json(), echoed.headers["x-request-id"]) == ({"decision": True}, "r-1")
        fresh = requests.post(url, json=EVALUATION, timeout=5)
        assert len(fresh.headers["x-request-id"]) == 36  # one made up when none was sent
        assert sandbox.stats()["decisions"] == {"permit": 2}
        sandbox.reset()
        assert sandbox.stats()["decisions"] == {}
        assert "world=AuthzenWorld(2 subjects" in repr(sandbox)


def test_fault_flags_apply_to_its_endpoints_and_injected_503s_carry_the_request_id() -> None:
    with Sandbox(dialect="authzen", world="todo", error_rate=1.0, fault_seed=1) as sandbox:
        url = f"{sandbox.base_url}/access/v1/evaluations"
        response = requests.post(url, json=EVALUATION, headers={"X-Request-ID": "r-2"}, timeout=5)
        assert (response.status_code, response.headers["x-request-id"]) == (503, "r-2")
        world = requests.get(f"{sandbox.base_url}/sandbox/v1/world", timeout=5).json()
        assert world["authzkit_sandbox"]["dialect"] == "authzen"  # never faulted
        assert sandbox.fault_counts()["unavailable:evaluations"] == 1


def test_settings_without_meaning_on_authzen_are_refused() -> None:
    with pytest.raises(ConfigError, match="token_outage does not apply"):
        Sandbox(dialect="authzen", token_outage=5)
    with pytest.raises(ConfigError, match="rotate_keys_every does not apply"):
        Sandbox(dialect="authzen", rotate_keys_every=5)
    with pytest.raises(ConfigError, match="authzen dialect only"):
        Sandbox(bearer_token="t")
    with pytest.raises(ConfigError, match="no OAuth client"):
        _ = Sandbox(dialect="authzen").client_id


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--world", "todo"], "--world todo: an AuthZEN world, for --dialect authzen"),
        (["--dialect", "authzen", "--token-outage", "3"], "token_outage does not apply"),
        (["--dialect", "authzen", "--world", "nowhere.json"], "nowhere.json"),
    ],
)
def test_bad_sandbox_input_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["sandbox", "--port", "0", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err and len(err.splitlines()) == 1
