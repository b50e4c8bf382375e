"""Reading ``deploy/`` as the tools that run it would: Compose's files with their variables
filled in, Kustomize's rendered output, and the commands and environment in them turned into
processes on 127.0.0.1.

Only what the network and the mounts change is substituted: host names and ports (a
container's ``sandbox:8000`` becomes ``127.0.0.1:<free port>``), a volume's path inside the
container (becomes a test directory), and ``authzkit`` (the image's console script) becomes
this interpreter's ``python -m authzkit``. Everything else is run as the files say.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from authzkit.wire.children import PACKAGE_ROOT

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
COMPOSE_REAL = DEPLOY / "compose.real-environment.yaml"
K8S = DEPLOY / "k8s"
OVERLAYS = ("real-environment", "with-sandbox")
HOST_OPTIONS = ("--host", "--master-host", "--master-bind-host")
PORT_OPTIONS = ("--port", "--master-port")
_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def kubectl() -> str:
    """The kubectl on PATH; without one the test skips, except on CI (then it fails)."""
    found = shutil.which("kubectl")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl is not installed, and CI is set: the manifests go unchecked")
        pytest.skip("kubectl is not installed (Kustomize renders through `kubectl kustomize`)")
    return found


def render(overlay: str) -> list[dict[str, Any]]:
    """``kubectl kustomize deploy/k8s/overlays/<overlay>``, as parsed documents."""
    return [dict(d) for d in _rendered(overlay, kubectl())]


@functools.cache
def _rendered(overlay: str, kubectl: str) -> tuple[dict[str, Any], ...]:
    done = subprocess.run(
        [kubectl, "kustomize", str(K8S / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


def find(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for document in documents:
        if document["kind"] == kind and document["metadata"]["name"].startswith(name):
            return document
    raise AssertionError(f"no {kind} {name} in {[d['metadata']['name'] for d in documents]}")


def interpolate(value: Any, variables: Mapping[str, str]) -> Any:
    """Compose's ``${VAR}`` and ``${VAR:-default}`` in every string of ``value``."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda m: variables.get(m.group(1)) or (m.group(2) or ""), value)
    if isinstance(value, list):
        return [interpolate(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, variables) for k, v in value.items()}
    return value


def compose(variables: Mapping[str, str], *files: Path) -> dict[str, Any]:
    """The Compose files merged as ``docker compose -f … -f …`` merges services (a later
    file's keys replace an earlier one's), variables filled in."""
    merged: dict[str, Any] = {}
    for path in files or (COMPOSE,):
        loaded = yaml.safe_load(path.read_text())
        for key, value in loaded.items():
            if key == "services":
                services = merged.setdefault("services", {})
                for name, service in value.items():
                    services.setdefault(name, {}).update(service)
            else:
                merged[key] = value
    return interpolate(merged, variables)


@dataclass
class Network:
    """Container names and ports → 127.0.0.1 and free ports; volume paths → directories."""

    hosts: dict[str, str]
    ports: dict[str, str]
    mounts: dict[str, Path] = field(default_factory=dict)

    def argument(self, text: str, option: str = "") -> str:
        """One argument, ``option`` the one before it: a host or port only as the value of
        a host or port option, a volume path by its prefix, URLs anywhere."""
        if option in HOST_OPTIONS:
            return self.hosts.get(text, text)
        if option in PORT_OPTIONS:
            return self.ports.get(text, text)
        for inside, outside in self.mounts.items():
            if text.startswith(inside):
                return str(outside) + text[len(inside) :]
        return self.url(text)

    def url(self, text: str) -> str:
        def local(match: re.Match[str]) -> str:
            host, port = match.group(2), match.group(3)
            return f"{match.group(1)}{self.hosts.get(host, host)}:{self.ports.get(port, port)}"

        return re.sub(r"(https?://)([\w.-]+):(\d+)", local, text)


def command(argv: list[str], network: Network) -> list[str]:
    """A container's command as a local one: ``authzkit`` is this interpreter's."""
    local = [network.argument(a, argv[i - 1] if i else "") for i, a in enumerate(argv)]
    if local[0] == "authzkit":
        local = [sys.executable, "-m", "authzkit", *local[1:]]
    return local


def environment(values: Mapping[str, str], network: Network) -> dict[str, str]:
    """A process environment holding ``values`` (URLs localized) and no other AUTHZKIT_*
    (the developer's own must not leak in), with authzkit importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    env.update({k: network.url(v) for k, v in values.items()})
    return env


def read_env_file(path: Path) -> dict[str, str]:
    """A Compose env file: ``KEY=value`` lines, ``#`` comments and blank lines skipped."""
    values = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def env_file(service: Mapping[str, Any], base: Path = DEPLOY) -> dict[str, str]:
    """The variables of a Compose service's ``env_file`` (one path, or a list)."""
    files = service.get("env_file") or []
    values: dict[str, str] = {}
    for entry in [files] if isinstance(files, str) else files:
        path = entry if isinstance(entry, str) else entry["path"]
        values.update(read_env_file(base / path))
    return values


def container_env(container: Mapping[str, Any], documents: list[dict[str, Any]]) -> dict[str, str]:
    """A Kubernetes container's environment: its ``envFrom`` ConfigMaps and Secrets
    (decoded), then its ``env``."""
    import base64

    values: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            found = find(documents, "ConfigMap", source["configMapRef"]["name"])
            values.update(found.get("data") or {})
        else:
            found = find(documents, "Secret", source["secretRef"]["name"])
            values.update(
                {k: base64.b64decode(v).decode() for k, v in (found.get("data") or {}).items()}
            )
    values.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return values
