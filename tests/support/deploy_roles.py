"""Running ``deploy/compose.yaml``'s services as local processes: the sandbox until its own
healthcheck passes, then a master and workers, each with the command and the env file its
service names (see :mod:`support.manifests` for what is substituted)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from authzkit.wire.children import free_port, stop_process

from support.extras import held_env
from support.manifests import Network, command, compose, env_file, environment

RUN_TIMEOUT = 120  # a master that does not stop by itself fails the test, never hangs it
RUNS = "runs"  # the master's volume in compose.yaml


def network() -> Network:
    """Every Compose service on 127.0.0.1; the sandbox's and the master's ports free ones."""
    return Network(
        hosts={"0.0.0.0": "127.0.0.1", "sandbox": "127.0.0.1", "master": "127.0.0.1"},
        ports={"8000": str(free_port()), "5557": str(free_port())},
    )


def start_sandbox(net: Network, log: Path) -> subprocess.Popen[bytes]:
    """compose.yaml's sandbox service, waited for with its own healthcheck's command and
    retries (as ``depends_on: condition: service_healthy`` waits)."""
    service = compose({})["services"]["sandbox"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command(service["command"], net),
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment({}, net),
        )
    check = service["healthcheck"]
    probe = command([net.url(a) for a in check["test"][1:]], net)
    for _ in range(int(check["retries"])):
        if subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0:
            return process
        assert process.poll() is None, log.read_text()
        time.sleep(float(check["interval"].rstrip("s")))
    stop_process(process)
    raise AssertionError(f"the sandbox never passed its healthcheck:\n{log.read_text()}")


@dataclass
class Roles:
    """What a master and its workers left: exit codes, output, the run directory."""

    master: int
    master_output: str
    workers: list[int]
    worker_outputs: list[str]
    out: Path

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())


def volume(service: Mapping[str, Any], name: str) -> str:
    """The path inside the container of the named volume a service mounts."""
    for entry in service.get("volumes", []):
        source, _, target = entry.partition(":")
        if source == name:
            return target.split(":")[0]
    raise AssertionError(f"no volume {name} in {service.get('volumes')}")


def run_roles(
    net: Network,
    variables: Mapping[str, str],
    tmp: Path,
    *,
    workers: list[Mapping[str, str] | None] | None = None,
    master_args: Mapping[str, str] | None = None,
) -> Roles:
    """compose.yaml's master and ``deploy.replicas`` workers (or one per entry of
    ``workers``: an environment of its own in place of its env file's, when given), each
    to its end; ``master_args`` replaces the value after a master option."""
    services = compose(variables)["services"]
    master, worker = services["master"], services["worker"]
    runs = tmp / RUNS
    runs.mkdir(exist_ok=True)
    net.mounts = {volume(master, RUNS): runs}
    argv = list(master["command"])
    for option, value in (master_args or {}).items():
        argv[argv.index(option) + 1] = value
    envs = workers if workers is not None else [None] * int(worker["deploy"]["replicas"])
    logs = [tmp / "master.log", *(tmp / f"worker-{i}.log" for i in range(len(envs)))]
    handles = [log.open("wb") for log in logs]
    started = [
        subprocess.Popen(
            command(argv, net),
            env=environment(env_file(master), net) | held_env("loadtest", tmp),
            cwd=tmp,
            stdout=handles[0],
            stderr=subprocess.STDOUT,
        )
    ]
    try:
        for env, handle in zip(envs, handles[1:], strict=True):
            values = env_file(worker) if env is None else env
            started.append(
                subprocess.Popen(
                    command(worker["command"], net),
                    env=environment(values, net) | held_env("worker", tmp),
                    cwd=tmp,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                )
            )
        code = started[0].wait(timeout=RUN_TIMEOUT)
        codes = [p.wait(timeout=30) for p in started[1:]]
    finally:
        for process in started:
            stop_process(process)
        for handle in handles:
            handle.close()
    outputs = [log.read_text(errors="replace") for log in logs]
    out = net.argument(argv[argv.index("--out") + 1], "--out")
    return Roles(code, outputs[0], codes, outputs[1:], Path(out))
