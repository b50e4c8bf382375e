"""The commands deploy/compose.yaml runs, run here: a sandbox, a master and two workers as
separate processes on 127.0.0.1, with the services' own commands and env file. The merged
summary counts every request of both workers, the exit code follows the threshold (broken
here: exit 1), and a master whose workers do not all come (one exits at start, missing its
settings) gives up with one line instead of hanging, and its report says who never
reported."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.wire.children import stop_process

from support.deploy_roles import RUNS, network, run_roles, start_sandbox, volume
from support.manifests import (
    COMPOSE,
    COMPOSE_REAL,
    Network,
    command,
    compose,
    env_file,
    environment,
    find,
    render,
)

pytestmark = pytest.mark.slow

# What a user sets for `docker compose up`: two workers, a short small run.
RUN = {"WORKERS": "2", "USERS": "2", "RUN_TIME": "2s", "MAX_FAILURE_RATIO": "0"}
GAVE_UP = 3
MASTER_LOST = 4


@pytest.fixture(scope="module")
def sandbox_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    net = network()
    process = start_sandbox(net, tmp_path_factory.mktemp("sandbox") / "sandbox.log")
    yield net.ports["8000"]
    stop_process(process)


def _network(sandbox_port: str) -> Network:
    net = network()
    net.ports["8000"] = sandbox_port
    return net


def test_master_and_two_workers_from_compose(sandbox_port: str, tmp_path: Path) -> None:
    # A p95 threshold no network meets: the master's exit code must say it broke (the
    # run itself is clean: --max-failure-ratio 0 holds).
    roles = run_roles(_network(sandbox_port), {**RUN, "MAX_P95_MS": "0.001"}, tmp_path)
    assert roles.workers == [0, 0], roles.worker_outputs
    summary = roles.summary
    assert roles.master == 1, roles.master_output[-3000:]
    p95 = summary["thresholds"]["p95_ms"]
    assert p95 > 0.001  # judged from the µs histograms: never Locust's whole-ms 0
    [problem] = summary["thresholds"]["problems"]
    assert problem.startswith("Aggregated p95 ") and problem.endswith(" ms > --max-p95-ms 0.001")
    assert summary["failures_total"] == 0
    workers = summary["workers"]
    assert workers["expected"] == workers["took_part"] == 2
    assert workers["never_reported"] == 0 and workers["stopped_reporting"] == []
    per_worker = [node["requests"] for node in workers["nodes"]]
    assert len(per_worker) == 2 and min(per_worker) > 0  # both workers sent load
    assert sum(per_worker) == summary["requests"] > 0  # every request of both, counted once
    assert summary["latency_us"]["Aggregated"]["count"] == summary["requests"]
    page = (roles.out / "report.html").read_text()
    assert "2 of 2 expected" in page and "workers took part" in page


def test_master_gives_up_when_a_worker_lacks_its_settings(
    sandbox_port: str, tmp_path: Path
) -> None:
    # One worker as compose.yaml starts it, one without any AUTHZKIT_* (its env file
    # missing); the master's wait is cut from compose's 120 s to 3 s.
    roles = run_roles(
        _network(sandbox_port),
        {**RUN, "MAX_P95_MS": "1000"},
        tmp_path,
        workers=[None, {}],
        master_args={"--expect-workers-max-wait": "3"},
    )
    assert roles.workers[1] == 2
    assert roles.worker_outputs[1].strip().splitlines() == [
        "authzkit loadtest: --worker needs AUTHZKIT_BASE_URL: every process of a "
        "distributed run must reach the same service (a sandbox started by one process "
        "is out of the others' reach; start `authzkit sandbox --host 0.0.0.0` and point "
        "at it)"
    ]
    assert roles.master == GAVE_UP, roles.master_output[-3000:]
    assert "gave up after 3 s waiting for workers: 1 of 2 connected" in roles.master_output
    assert roles.summary["workers"]["never_reported"] >= 1
    page = (roles.out / "report.html").read_text()
    assert "never reported" in page


def test_worker_without_its_subjects_file_exits_2_naming_it(tmp_path: Path) -> None:
    # compose.real-environment.yaml's worker: the subjects secret is not mounted here.
    services = compose(RUN, COMPOSE, COMPOSE_REAL)["services"]
    net = network()
    worker = services["worker"]
    values = env_file({"env_file": "real-environment.env.example"})  # placeholders
    done = subprocess.run(
        command(worker["command"], net),
        env=environment(values, net),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "authzkit loadtest: argument --subjects: /run/secrets/subjects: no such file "
        "(see authzkit loadtest --help)"
    ]


def test_the_with_sandbox_masters_wait_reaches_the_sandbox(sandbox_port: str) -> None:
    # The with-sandbox overlay's init container, with the Service's name and port local.
    job = find(render("with-sandbox"), "Job", "authzkit-master")
    init = job["spec"]["template"]["spec"]["initContainers"][0]
    net = _network(sandbox_port)
    net.hosts["authzkit-sandbox"] = "127.0.0.1"
    argv = command(init["command"], net)
    argv[0] = sys.executable if argv[0] == "python" else argv[0]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def _connected(out: Path) -> int:
    try:
        return int(json.loads((out / "workers.json").read_text())["connected"])
    except (OSError, ValueError, KeyError):
        return 0


def test_a_worker_whose_master_was_killed_exits_by_itself_saying_why(
    sandbox_port: str, tmp_path: Path
) -> None:
    # compose.yaml's master waiting for its two workers, one connected; then the master is
    # killed (the command and its locust child: SIGKILL, nothing said to anyone). The
    # worker stops by itself with one line and a non-zero exit, instead of waiting for a
    # master that is gone (Locust's own: 60 s, then exit 0).
    net = _network(sandbox_port)
    services = compose(RUN)["services"]
    master, worker = services["master"], services["worker"]
    runs = tmp_path / RUNS
    runs.mkdir()
    net.mounts = {volume(master, RUNS): runs}
    argv = command(master["command"], net)
    out = Path(argv[argv.index("--out") + 1])
    logs = [tmp_path / "master.log", tmp_path / "worker.log"]
    with logs[0].open("wb") as master_log, logs[1].open("wb") as worker_log:
        boss = subprocess.Popen(
            argv,
            # killed, it cannot remove its own temp dir: one in the test's, not in /tmp
            env={**environment(env_file(master), net), "TMPDIR": str(tmp_path)},
            cwd=tmp_path,
            stdout=master_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killed with its locust child
        )
        hand = subprocess.Popen(
            command(worker["command"], net),
            env=environment(env_file(worker), net),
            cwd=tmp_path,
            stdout=worker_log,
            stderr=subprocess.STDOUT,
        )
    try:
        for _ in range(600):  # at most a minute: a master that never sees it fails the test
            if _connected(out) or boss.poll() is not None or hand.poll() is not None:
                break
            time.sleep(0.1)
        assert _connected(out) == 1, logs[0].read_text() + logs[1].read_text()
        os.killpg(boss.pid, signal.SIGKILL)
        code = hand.wait(timeout=60)
    finally:
        if boss.poll() is None:
            os.killpg(boss.pid, signal.SIGKILL)
        boss.wait(timeout=30)
        stop_process(hand)
    said = logs[1].read_text().strip().splitlines()
    assert code == MASTER_LOST, said[-10:]
    assert said[-1] == (
        f"authzkit loadtest: lost the master at 127.0.0.1:{net.ports['5557']}: no heartbeat "
        f"for 15 s (the master stopped or its machine is gone); this worker stopped its "
        f"users and exits {MASTER_LOST}"
    )
