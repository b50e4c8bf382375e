"""Secrets audit: configure recognizable secrets, run everything, find none of them anywhere.

A sandbox PROCESS serves a world whose client secret, PIN, password and TOTP secret are
recognizable strings; every user-facing entry point then runs against it in real-environment
mode (the four ``AUTHZKIT_*`` variables plus a minted subject token): the demo, each CLI
command, traces, a load test with its report, and every notebook. Each byte those runs leave
behind (stdout, stderr, trace files, load-test output, executed notebooks with their widget
state) is searched for the secrets and for anything shaped like a JWT or JWE. The sandbox's
own startup banner is left out: printing the demo credentials is its documented job.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess
from authzkit.sandbox.world import World

REPO = Path(__file__).resolve().parents[2]
CLIENT_SECRET = "AUDIT-client-secret-5ee1c0de"
PIN = "7392046158"
PASSWORD = "AUDIT-password-correct-horse"
TOTP_SECRET = "AUDITAUDITAUDITAUDITAUDITAUDITAU"
# Every JWT and JWE starts with a base64url JSON header: '{"' encodes as 'eyJ'.
TOKEN_SHAPED = re.compile(r"eyJ[\w-]{8,}\.[\w-]+\.")

pytestmark = pytest.mark.slow


def audit_world() -> dict:
    world = World.default().to_json()
    for client in world["clients"]:
        if client["resource_server"]:
            client["client_secret"] = CLIENT_SECRET
    for subject in world["subjects"]:
        if subject["id"] == "alice":
            subject["credentials"] = {"pin": PIN, "login_password": PASSWORD,
                                      "totp": TOTP_SECRET}
    return world


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A sandbox process on the audit world, and the environment a user would set."""
    root = tmp_path_factory.mktemp("audit")
    world_file = root / "world.json"
    world_file.write_text(json.dumps(audit_world()))
    with SandboxProcess(world=world_file, log=root / "sandbox-banner.log") as sandbox:
        admin = sandbox.admin()
        subject_token = admin.session_token("alice", ttl=3600)
        resource_id = next(r["id"] for r in admin.world()["resources"] if r["owner"] == "alice")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
        env.update(sandbox.env())
        env.update({"AUTHZKIT_SUBJECT_TOKEN": subject_token,
                    "AUTHZKIT_RESOURCE_ID": resource_id, "AUTHZKIT_ANSWER_PIN": PIN,
                    "PYTHONUNBUFFERED": "1"})
        assert env["AUTHZKIT_CLIENT_SECRET"] == CLIENT_SECRET
        work = root / "work"
        work.mkdir()
        yield {"env": env, "work": work, "subject_token": subject_token,
               "resource_id": resource_id, "secrets": [CLIENT_SECRET, PIN, PASSWORD,
                                                         TOTP_SECRET, subject_token]}


def run(audit: dict, *args: str, timeout: float = 180) -> str:
    """Run ``authzkit ARGS`` as a user would; return everything it printed."""
    result = subprocess.run([sys.executable, "-m", "authzkit", *args], env=audit["env"],
                            cwd=audit["work"], capture_output=True, text=True, timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"authzkit {' '.join(args)} failed:\n{output[-2000:]}"
    return output


def assert_clean(where: str, text: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert secret not in text, f"a configured secret appears in {where}"
    match = TOKEN_SHAPED.search(text)
    assert match is None, f"a token-shaped string appears in {where}: {match.group(0)[:12]}…"


def test_cli_commands_traces_and_load_test_leak_nothing(audit: dict) -> None:
    outputs = {
        "demo": run(audit, "demo"),
        "token": run(audit, "token"),
        "keys": run(audit, "keys"),
        "authorize": run(audit, "authorize", "show_account_balance_public"),
        "solve": run(audit, "solve", "transfer_funds"),
        "trace": run(audit, "trace", "challenge", "--out", "traces/challenge.md")
        + run(audit, "trace", "errors", "--out", "traces/errors.md"),
    }
    assert "all 12 steps ended as expected" in outputs["demo"]

    subjects = audit["work"] / "subjects.csv"
    with subjects.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["subject_token", "resource_id", "resource_type", "pin"])
        writer.writerow([audit["subject_token"], audit["resource_id"], "srn:resource:account",
                         PIN])
    outputs["loadtest"] = run(audit, "loadtest", "--scenario", "challenge", "--users", "2",
                              "--run-time", "3s", "--subjects", str(subjects),
                              "--out", "loadtest-out", timeout=240)
    outputs["report"] = run(audit, "report", "loadtest-out")

    for name, text in outputs.items():
        assert_clean(f"the output of authzkit {name}", text, audit["secrets"])
    for path in sorted(audit["work"].rglob("*")):
        if path.is_file() and path != subjects:
            assert_clean(str(path.relative_to(audit["work"])),
                         path.read_text(errors="replace"), audit["secrets"])


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_run_on_a_configured_environment_leaks_nothing(
        audit: dict, notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    for name, value in audit["env"].items():
        if name.startswith("AUTHZKIT_"):
            monkeypatch.setenv(name, value)
    document = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        document, timeout=240, kernel_name="python3", allow_errors=True,
        store_widget_state=True, resources={"metadata": {"path": str(audit["work"])}})
    client.execute()
    executed = nbformat.writes(document)
    assert_clean(f"{notebook.name} executed on a configured environment", executed,
                 audit["secrets"])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_holds_no_secret(notebook: Path, world_secrets: list[str]) -> None:
    # PINs are short digit runs that occur by chance in long outputs; the rest cannot.
    secrets = [secret for secret in world_secrets if not secret.isdigit()]
    assert_clean(f"committed {notebook.name}", notebook.read_text(), secrets)
