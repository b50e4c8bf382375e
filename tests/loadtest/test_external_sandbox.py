"""``authzkit loadtest`` against an authzkit sandbox started elsewhere, reached with
``AUTHZKIT_BASE_URL`` alone, as a new user meets one: ``authzkit sandbox`` in one terminal
(here the module's sandbox process), the export line in another. Every load model takes
subjects, credentials and demo actions from its world, as ``demo`` does; a service that is
no sandbox still needs ``--subjects FILE``.

The four runs (closed loop, ``--fast`` challenge, ``--rate``, a master with one worker) run
two at a time, five seconds each: what is judged is what each printed and wrote, and what
the sandbox counted, never how fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env, free_port, stop_process

from support.loadtest import PACED, read_results

pytestmark = pytest.mark.slow

# Five seconds, every user at once (-r): a closed run of 2 users started at 2/s sent nothing in
# 3 s while the suite's first minute kept both cores busy (CI: "no request was sent").
RUN = ("-t", "5s", "--quiet", "--no-report", "--max-failure-ratio", "0", "--wait-time", PACED)
WHERE = "(an authzkit sandbox started elsewhere)"


def start(url: str, *args: str, cwd: Path) -> subprocess.Popen[str]:
    """``authzkit loadtest ARGS`` with ``AUTHZKIT_BASE_URL=url`` and nothing else set."""
    return subprocess.Popen(
        [sys.executable, "-m", "authzkit", "loadtest", *args],
        cwd=cwd,
        env=child_env({"AUTHZKIT_BASE_URL": url}),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Its exit code and everything it printed (killed past a generous deadline)."""
    try:
        out, err = process.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        stop_process(process)
        out, err = process.communicate()
    return process.returncode, out + err


@pytest.mark.usefixtures("no_authzkit_env")
def test_every_load_model_runs_on_a_sandbox_started_elsewhere(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    url, port = sandbox_process.base_url, str(free_port())
    runs = {
        "closed": ["-u", "2", "-r", "10"],
        "fast-challenge": ["--fast", "--scenario", "challenge", "-u", "2", "-r", "10"],
        "rate": ["--rate", "20"],
        "master": [
            "--master",
            "--expect-workers",
            "1",
            "--expect-workers-max-wait",
            "60",
            "--master-bind-host",
            "127.0.0.1",
            "--master-port",
            port,
            "--scenario",
            "challenge",
            "--rate",  # the worker is not told: it follows its master's open model
            "20",
        ],
    }
    before = sandbox_process.admin().stats()
    done: dict[str, tuple[int, str]] = {}
    children: list[subprocess.Popen[str]] = []  # all stopped, whatever happens
    try:
        for wave in (("closed", "fast-challenge"), ("rate", "master")):  # two at a time
            started = {
                name: start(url, *runs[name], *RUN, "--out", str(tmp_path / name), cwd=tmp_path)
                for name in wave
            }
            children += started.values()
            if "master" in wave:
                children.append(
                    start(
                        url,
                        "--worker",
                        "--master-host",
                        "127.0.0.1",
                        "--master-port",
                        port,
                        "--scenario",
                        "challenge",
                        cwd=tmp_path,
                    )
                )
            done.update({name: finish(process) for name, process in started.items()})
        worker_code, worker_output = finish(children[-1])
    finally:
        for process in children:
            stop_process(process)
    assert worker_code == 0, worker_output[-3000:]
    for name, (code, output) in done.items():
        out = tmp_path / name
        assert code == 0, f"{name}: exit {code}\n{output[-3000:]}"
        assert "needs --subjects" not in output
        assert f"against {url}" in output, output
        if name != "master":  # a master names its workers there instead
            assert f"against {url} {WHERE}" in output, output
        # The world's three (subject, account) pairs, asked once each with its demo action.
        action, expected = (
            ("transfer_funds", "challenge_required")
            if "challenge" in runs[name]
            else ("show_account_balance_public", "authorized")
        )
        assert f"preflight: 3 subjects x '{action}': 3 {expected};" in output, output
        meta = json.loads((out / "run.json").read_text())
        assert (meta["sandbox"], meta["sandbox_elsewhere"], meta["host"]) == (False, True, url)
        assert meta["preflight"]["ran"] is True
        run = read_results(out, code, output)
        run.assert_clean()
        assert run.row("POST", "authorize")["num_requests"] > 0
        if action == "transfer_funds":
            assert run.row("FLOW", "challenge round trip")["num_requests"] > 0
    after = sandbox_process.admin().stats()
    assert after["challenges_issued"] > before["challenges_issued"]
    assert after["authorize"]["authorized"] > before["authorize"].get("authorized", 0)


@pytest.mark.parametrize(
    "credentials",
    [{}, {"AUTHZKIT_CLIENT_ID": "rs", "AUTHZKIT_CLIENT_SECRET": "no-sandbox-secret"}],
    ids=["url-alone", "with-credentials"],
)
def test_a_service_that_is_no_sandbox_still_needs_a_subjects_file(
    sandbox_process: SandboxProcess,
    no_authzkit_env: Path,
    credentials: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Below a path prefix the sandbox answers 404 to ``/sandbox/v1/world``: a service
    that does not say it is a sandbox, so a real environment's rule holds."""
    url = f"{sandbox_process.base_url}/not-a-sandbox"
    for name, value in {"AUTHZKIT_BASE_URL": url, **credentials}.items():
        monkeypatch.setenv(name, value)
    before = sandbox_process.admin().stats()
    out = no_authzkit_env / "run"
    assert main(["loadtest", "-t", "3s", "--out", str(out)]) == 2
    seen = capsys.readouterr()
    [line] = seen.err.strip().splitlines()
    assert line.startswith(
        "authzkit loadtest: a real environment (AUTHZKIT_BASE_URL) needs --subjects FILE"
    ), line
    assert f"{url} is no authzkit sandbox" in line and "no-sandbox-secret" not in line
    assert seen.out == "" and not out.exists()
    assert sandbox_process.admin().stats() == before  # not a token, not an authorize
