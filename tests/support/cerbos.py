"""Cerbos, an AuthZEN PDP nobody here wrote, on 127.0.0.1: the npm package's binary
(``cerbos/package-lock.json``, installed by ``.ci/run`` or once here) serving the policy pack in
``tests/interop/cerbos/policies`` (the certification fixture and the todo scenario) from disk,
telemetry off, on a free port. :class:`CerbosPdp` starts it in its own process group, waits until
its metadata answers, and :meth:`CerbosPdp.stop` ends the group. Without it installed the tests
skip with the reason, except under ``CI`` (see :func:`support.certified_provider.unavailable`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import requests

from authzkit.wire.authzen import METADATA_PATH

from support.certified_provider import npm_installed

HERE = Path(__file__).resolve().parents[1] / "interop" / "cerbos"
POLICIES = HERE / "policies"
BINARY = HERE / "node_modules" / "@cerbos" / "cerbos-linux-x64" / "cerbos-linux-x64"
START_TIMEOUT_S = 30.0
CONFIG = """\
server:
  httpListenAddr: "127.0.0.1:{http}"
  grpcListenAddr: "127.0.0.1:{grpc}"
storage:
  driver: disk
  disk:
    directory: "{policies}"
    watchForChanges: false
telemetry:
  disabled: true
"""


def installed_cerbos() -> Path:
    """The binary, installed from the lock file if needed (once, other workers waiting)."""
    npm_installed(HERE, BINARY, "cerbos")
    return BINARY


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CerbosPdp:
    """A running Cerbos: ``base_url`` is its PDP URL (what its metadata names)."""

    def __init__(self) -> None:
        binary = installed_cerbos()
        self._dir = tempfile.TemporaryDirectory(prefix="authzkit-cerbos-")
        port = free_port()
        config = Path(self._dir.name) / "cerbos.yaml"
        config.write_text(CONFIG.format(http=port, grpc=free_port(), policies=POLICIES))
        self.log = Path(self._dir.name) / "cerbos.log"
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [str(binary), "server", f"--config={config}", "--log-level=warn"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stop() reaches everything it started
            )
        self.base_url = f"http://127.0.0.1:{port}"
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self._process.poll() is None:
            try:
                if requests.get(self.base_url + METADATA_PATH, timeout=2).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        output = self.log.read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"cerbos did not start: {output}")

    def stop(self) -> None:
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait()
        self._dir.cleanup()
