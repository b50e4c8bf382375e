"""Each install line brings what its commands import (issue: the README's first command
crashed on a fresh machine while this suite, holding every extra, stayed green).

Every child here is held to one extra by ``support.extras``: importing a module of a
distribution the extra does not bring fails as in a fresh venv, in the child and in every
process it starts. The core runs its commands against a real environment without importing
any sandbox code, and against a sandbox started elsewhere; ``[sandbox]`` runs the demo and the
pytest plugin; ``[loadtest]`` a load test and its report; ``[notebooks]`` notebook 00. The
``[worker]`` and ``[docs]`` lines are held where the suite runs them already
(``support.deploy_roles``' workers, ``tests/docs``' build).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from authzkit.sandbox import Sandbox
from authzkit.shared.extras import EXTRAS

from support.broken_proxy import BrokenProxy
from support.extras import distributions, held_env
from support.loadtest import PACED

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 180

# One child runs several commands in a row through authzkit's own ``main``, each with its own
# AUTHZKIT_* variables, and writes their exit codes and the authzkit.sandbox modules imported.
DRIVER = """
import contextlib, io, json, os, sys
from authzkit.cli.main import main
runs, report = json.loads(sys.argv[1]), sys.argv[2]
base = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
results = []
for variables, argv in runs:
    os.environ.clear()
    os.environ.update(base, **variables)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    results.append({"argv": argv, "code": code, "output": out.getvalue()[-1500:]})
sandbox = sorted(m for m in sys.modules if m.split(".")[:2] == ["authzkit", "sandbox"])
with open(report, "w") as file:
    json.dump({"results": results, "sandbox_modules": sandbox}, file)
"""

Runs = Sequence[tuple[Mapping[str, str], Sequence[str]]]


def held_child(
    extra: str | None,
    tmp_path: Path,
    argv: Sequence[str],
    *also: str,
    variables: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` held to ``extra`` (and ``also``), in ``tmp_path``, with no AUTHZKIT_*
    of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    env.update(held_env(extra, tmp_path, *also), **(variables or {}))
    return subprocess.run(
        [sys.executable, *argv],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def run_commands(extra: str | None, tmp_path: Path, runs: Runs) -> dict[str, object]:
    """Each ``(variables, argv)`` of ``runs`` as ``authzkit ARGV``, in one child held to
    ``extra``; every command must exit 0."""
    report = tmp_path / "report.json"
    payload = json.dumps([[dict(v), list(a)] for v, a in runs])
    done = held_child(extra, tmp_path, ["-c", DRIVER, payload, str(report)])
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(report.read_text())
    for result in found["results"]:  # type: ignore[attr-defined]
        assert result["code"] == 0, f"authzkit {' '.join(result['argv'])}:\n{result['output']}"
    return found


def real_environment(sandbox: Sandbox, proxy: BrokenProxy) -> dict[str, str]:
    """What a partner sets for a real service: the proxy hides every sandbox-only path."""
    alice = sandbox.world.owned_by("alice")[0]
    foreign = sandbox.world.foreign_to("alice")
    assert sandbox.client_secret is not None and foreign is not None
    return {
        "AUTHZKIT_BASE_URL": proxy.base_url,
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        "AUTHZKIT_SUBJECT_TOKEN": sandbox.session_token("alice", ttl=600),
        "AUTHZKIT_RESOURCE_ID": alice.id,
        "AUTHZKIT_FOREIGN_RESOURCE_ID": foreign.id,
        "AUTHZKIT_ANSWER_PIN": "1234",
        "AUTHZKIT_PLAIN_ACTION": "show_account_balance_public",
        "AUTHZKIT_CHALLENGE_ACTION": "transfer_funds",
    }


def test_the_core_runs_every_command_on_a_real_environment_without_sandbox_code(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with BrokenProxy(sandbox) as proxy:
        real = real_environment(sandbox, proxy)
        found = run_commands(
            None,
            tmp_path,
            [
                (real, ["token"]),
                (real, ["keys"]),
                (real, ["authorize", "show_account_balance_public"]),
                (real, ["solve", "transfer_funds"]),
                (real, ["trace", "plain", "--out", "-"]),
                (real, ["matrix"]),
                (real, ["check", "--yes"]),
            ],
        )
    assert found["sandbox_modules"] == [], "a real environment needs no sandbox code"


def test_the_core_reaches_a_sandbox_started_elsewhere(tmp_path: Path) -> None:
    with Sandbox(key_size=2048) as elsewhere:  # one that says it is a sandbox
        variables = {"AUTHZKIT_BASE_URL": elsewhere.base_url}
        found = run_commands(
            None,
            tmp_path,
            [(variables, ["token"]), (variables, ["authorize", "show_account_balance_public"])],
        )
    assert "authzkit.sandbox.embedded" not in found["sandbox_modules"]  # type: ignore[operator]


def test_the_sandbox_extra_runs_the_demo(tmp_path: Path) -> None:
    run_commands("sandbox", tmp_path, [({}, ["demo"])])


PLUGIN_TEST = """
def test_the_owner_is_authorized(authz, authz_client):
    authz_client.authorize(
        "show_account_balance_public",
        resource_id="5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11",
        subject_token=authz.session_token("alice"),
    )
    assert authz.outcomes == ["authorized"]
"""


def test_the_sandbox_extra_runs_the_pytest_plugin(tmp_path: Path) -> None:
    """A partner's venv: ``[sandbox]`` and pytest (the other plugins installed here stay
    out, the plugin is named as its entry point names it)."""
    (tmp_path / "test_partner.py").write_text(PLUGIN_TEST)
    done = held_child(
        "sandbox",
        tmp_path,
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "authzkit.pytest_plugin"],
        "pytest",
        variables={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_loadtest_extra_runs_a_load_test_and_its_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_commands(
        "loadtest",
        tmp_path,
        [
            # paced: the extra's imports are judged, not its throughput (flat out, its users
            # and the sandbox kept both cores busy for the whole run); the page is written
            # once, by `report` (the same write_html the run would call)
            ({}, ["loadtest", "-t", "2s", "--wait-time", PACED, "--no-report", "--out", str(out)]),
            ({}, ["report", str(out)]),
        ],
    )
    assert (out / "report.html").is_file()


def test_the_notebooks_extra_runs_notebook_00(tmp_path: Path) -> None:
    """Its code cells in IPython, as a kernel runs them (a kernel's own start-up, zmq and
    all, is ipykernel's: nbval runs every notebook in one)."""
    code = (
        "import json, sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "for cell in json.load(open(sys.argv[1]))['cells']:\n"
        "    if cell['cell_type'] == 'code':\n"
        "        shell.run_cell(''.join(cell['source'])).raise_error()\n"
    )
    notebook = REPO / "notebooks" / "00_quickstart.ipynb"
    done = held_child("notebooks", tmp_path, ["-c", code, str(notebook)], "ipykernel")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_the_missing_module_table_names_modules_each_extra_brings(extra: str) -> None:
    """``authzkit.shared.extras`` tells a user which line installs a missing module: each
    module it lists for an extra comes with that extra."""
    brought = {canonicalize_name(name) for name in distributions(extra)}
    owners = metadata.packages_distributions()
    for module in EXTRAS[extra]:
        assert module in owners, f"{module}: no installed distribution has this module"
        assert {canonicalize_name(o) for o in owners[module]} & brought, (
            f"{module} does not come with authzkit[{extra}]"
        )


def test_a_held_child_fails_as_a_fresh_venv_would(tmp_path: Path) -> None:
    done = held_child(None, tmp_path, ["-c", "import starlette"])
    assert done.returncode == 1
    assert "No module named 'starlette'" in done.stderr and "authzkit (core)" in done.stderr
