"""An external sandbox in one variable: ``AUTHZKIT_BASE_URL`` is all a user sets.

A service whose world document says it is an authzkit sandbox is a sandbox: subjects,
resources, actions and client credentials come from it, and wrong answers may go to it. The
same sandbox behind a proxy that hides ``/sandbox/v1/*`` (or one started with
``announce=False``) stays a real environment, with every rule of one. A sandbox process
started with a world of its own (``authzkit sandbox --world``, carol its only subject) serves
every command as carol, and ``AUTHZKIT_SUBJECT_TOKEN``/``AUTHZKIT_RESOURCE_ID`` win over
its world when set.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.sandbox import Sandbox
from authzkit.sandbox.admin import ExternalSandbox
from authzkit.sandbox.process import SandboxProcess
from authzkit.sandbox.world import World
from authzkit.shared.connection import connect
from authzkit.shared.consent import wrong_answers_allowed
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError

from support.broken_proxy import BrokenProxy

CAROL_PIN = "2468"


@pytest.fixture(scope="module", params=["draft", "published"])
def announced(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with Sandbox(key_size=2048, dialect=request.param) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def carol(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """``authzkit sandbox --world world.json`` as a child process: the demo world with carol
    its only subject, owning every account (so ``alice`` is nowhere)."""
    world = World.default().to_json()
    world["subjects"] = [{"id": "carol", "credentials": {"pin": CAROL_PIN}}]
    for resource in world["resources"]:
        resource["owner"] = "carol"
    path = tmp_path_factory.mktemp("carol") / "world.json"
    path.write_text(json.dumps(world), encoding="utf-8")
    with SandboxProcess(world=path) as sandbox:
        yield sandbox


def settings_for(url: str, **more: str) -> Settings:
    return Settings.from_env({"AUTHZKIT_BASE_URL": url, **more}, dotenv=None)


def test_a_sandbox_that_says_so_needs_only_its_url(announced: Sandbox) -> None:
    before = announced.stats()["tokens_issued"]
    with connect(settings_for(announced.base_url)) as connection:
        assert connection.is_sandbox and isinstance(connection.sandbox, ExternalSandbox)
        assert connection.sandbox.dialect == announced.dialect
        assert connection.action("plain") == "show_account_balance_public"
        resource_id, _ = connection.resource("alice")
        outcome = connection.client.authorize(
            connection.action("plain"),
            resource_id=resource_id,
            subject_token=connection.subject_token("alice"),
        )
        assert outcome.authorized
        assert set(connection.answers("alice")) >= {"pin"}
        assert wrong_answers_allowed(connection)  # no person's PIN is at stake on a sandbox
        assert "started elsewhere" in connection.where
    assert announced.running  # not ours to stop
    assert announced.stats()["tokens_issued"] == before + 1


def test_behind_a_proxy_that_hides_its_paths_it_is_a_real_environment(announced: Sandbox) -> None:
    with BrokenProxy(announced) as proxy:
        with pytest.raises(ConfigError, match="AUTHZKIT_CLIENT_ID and AUTHZKIT_CLIENT_SECRET"):
            connect(settings_for(proxy.base_url))
        secret = announced.client_secret or "unused"
        given = settings_for(
            proxy.base_url,
            AUTHZKIT_CLIENT_ID=announced.client_id,
            AUTHZKIT_CLIENT_SECRET=secret,
            **(
                {
                    "AUTHZKIT_ISSUER": proxy.base_url + "/auth/realms/authzkit",
                    "AUTHZKIT_CLIENT_AUTH": "client_secret_post",
                }
                if announced.dialect == "published"
                else {}
            ),
        )
        with connect(given) as connection:
            assert not connection.is_sandbox and not wrong_answers_allowed(connection)
            with pytest.raises(ConfigError, match="AUTHZKIT_SUBJECT_TOKEN"):
                connection.subject_token()


@pytest.mark.usefixtures("no_authzkit_env")
def test_every_command_runs_on_it(
    announced: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", announced.base_url)
    for argv in (
        ["token"],
        ["authorize", "show_account_balance_public"],
        ["demo"],
        ["matrix"],
        ["trace", "plain", "--out", "-"],
    ):
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    out = capsys.readouterr().out
    assert "all 12 steps ended as expected" in out
    assert "subject alice" in out


@pytest.mark.usefixtures("no_authzkit_env")
def test_an_unreachable_url_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing listens there: the same line and exit code, with credentials or without."""
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "http://127.0.0.1:9")  # discard: nothing listens
    line = (
        "authzkit demo: no answer from http://127.0.0.1:9 (connection refused): "
        "is AUTHZKIT_BASE_URL right, and the service up?\n"
    )
    assert main(["demo"]) == 1
    assert capsys.readouterr().err == line
    monkeypatch.setenv("AUTHZKIT_CLIENT_ID", "someone")
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", "external-sandbox-test-secret")
    assert main(["demo"]) == 1
    assert capsys.readouterr().err == line


def test_the_sandbox_command_prints_the_one_export_line(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "authzkit",
            "sandbox",
            "--key-size",
            "2048",
            "--ready-file",
            str(ready),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    shown = b""
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and b"Ctrl-C" not in shown:
            if select.select([process.stdout], [], [], 0.2)[0]:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break
                shown += chunk
    finally:
        process.terminate()
        process.communicate(timeout=30)
    exports = [
        line.strip() for line in shown.decode().splitlines() if line.strip().startswith("export ")
    ]
    assert len(exports) == 1 and exports[0].startswith("export AUTHZKIT_BASE_URL=http://127.0.0.1:")


@pytest.mark.usefixtures("no_authzkit_env")
def test_a_world_of_its_own_serves_every_command_as_its_subject(
    carol: SandboxProcess,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", carol.base_url)
    assert main(["authorize", "show_account_balance_public"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["outcome"] == "authorized"
    assert main(["trace", "challenge", "--out", "-"]) == 0, capsys.readouterr().err
    trace = capsys.readouterr().out
    assert "| 1 | authorize transfer_funds | 403 | challenge_required: pin |" in trace
    assert "| 200 | authorized (shape B) |" in trace
    assert main(["demo"]) == 0, capsys.readouterr()
    assert "all 12 steps ended as expected" in capsys.readouterr().out
    assert main(["matrix"]) == 0
    assert "subject carol: 5 action(s) x 3 resource(s)" in capsys.readouterr().out
    report = tmp_path / "check.json"
    assert main(["check", "--json", str(report)]) == 0  # no --yes: a sandbox is no person's
    seen = capsys.readouterr()
    assert "will send at most" not in seen.err and " 0 fail," in seen.out, seen.out[-2000:]
    assert json.loads(report.read_text())["target"]["sandbox"] is True


@pytest.mark.usefixtures("no_authzkit_env")
def test_an_explicit_subject_token_and_resource_win_over_the_world(
    carol: SandboxProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", carol.base_url)
    plain = ["authorize", "show_account_balance_public"]
    monkeypatch.setenv("AUTHZKIT_SUBJECT_TOKEN", "not-a-session-of-anyone")
    assert main(plain) == 1
    assert "srn:error:unauthenticated" in capsys.readouterr().err  # the variable was sent
    assert main([*plain, "--subject", "carol"]) == 0  # a named subject: minted again
    capsys.readouterr()
    monkeypatch.setenv("AUTHZKIT_SUBJECT_TOKEN", carol.admin().session_token("carol"))
    assert main(["matrix", "--actions", "show_account_balance_public"]) == 0
    assert "subject AUTHZKIT_SUBJECT_TOKEN: 1 action(s)" in capsys.readouterr().out
    monkeypatch.setenv("AUTHZKIT_RESOURCE_ID", "00000000-0000-4000-8000-0000000000c0")
    assert main(plain) == 1  # nobody owns it: the variable's resource was asked about
    assert "srn:error:unauthorized" in capsys.readouterr().err
    monkeypatch.delenv("AUTHZKIT_RESOURCE_ID")
    assert main(["solve", "transfer_funds"]) == 0, capsys.readouterr().err  # the world's PIN
    assert json.loads(capsys.readouterr().out)["outcome"] == "authorized"
    monkeypatch.setenv("AUTHZKIT_ANSWER_PIN", "0000")  # the variable's answer wins too
    assert main(["solve", "transfer_funds"]) == 1
    assert "srn:error:bad_challenge_solution" in capsys.readouterr().err
