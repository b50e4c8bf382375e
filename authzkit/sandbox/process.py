"""``authzkit sandbox`` as a child process, for load tests, tests and benchmarks.

Locust users need a sandbox they can reach over HTTP from another process, so the sandbox
runs as a subprocess of the current interpreter too; what any child of authzkit needs (its
environment, a free port, a stop with a deadline) is :mod:`authzkit.wire.children`. Every
wait has a deadline.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Unpack

from authzkit.sandbox.faults import FaultOptions, Faults
from authzkit.sandbox.server_thread import server_tls
from authzkit.wire import children
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret
from authzkit.wire.spec import AUTHZEN, CLIENT_AUTH_METHODS, DIALECTS, TLS_METHODS

START_TIMEOUT = 60.0


class SandboxProcess:
    """``authzkit sandbox`` as a child process on a free loopback port.

    ``with SandboxProcess(token_ttl=4) as sb:`` waits for its ready file; ``sb.base_url``,
    ``sb.client_id``, ``sb.client_secret`` and ``sb.admin()`` then reach it from any process.

    ``dialect="published"`` runs ``--dialect published``: ``sb.issuer`` is its OIDC issuer
    and, with the default world, ``sb.client_key_file`` the demo client's private key
    (written 0600 in the process's temporary directory, removed on stop); ``client_key``
    forces that file on (True) or off (False). ``sb.env()`` then points a child at the
    issuer with ``client_auth`` (``private_key_jwt`` by default in the published dialect).

    The fault keywords are ``Sandbox(...)``'s (``pause_every=5, pause_ms=500`` runs
    ``--pause-every 5.0 --pause-ms 500.0``); they are checked here, so a bad one raises
    :class:`ConfigError` before any process starts. Other flags go in ``options``.

    ``tls_cert`` and ``tls_key`` run ``--tls-cert``/``--tls-key`` (HTTPS; the pair is checked
    here first); ``tls_ca`` is the CA bundle :meth:`admin` and the children :meth:`env`
    points at it (``AUTHZKIT_TLS_CA_FILE``) trust.
    """

    def __init__(
        self,
        *,
        token_ttl: int | None = None,
        key_size: int = 2048,
        world: str | Path | None = None,
        log: Path | None = None,
        start_timeout: float = START_TIMEOUT,
        options: list[str] | None = None,
        dialect: str = "draft",
        client_key: bool | None = None,
        client_auth: str | None = None,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        tls_ca: str | Path | None = None,
        **faults: Unpack[FaultOptions],
    ) -> None:
        if dialect not in DIALECTS:
            raise ConfigError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        served = tuple(m for m in CLIENT_AUTH_METHODS if m not in TLS_METHODS)
        if client_auth is not None and client_auth not in served:
            raise ConfigError(
                f"client_auth must be one of {', '.join(served)} (the sandbox's token "
                f"endpoint has no mutual TLS), got {client_auth!r}"
            )
        self.tls = server_tls(tls_cert, tls_key)
        self.tls_ca = str(tls_ca) if tls_ca is not None else None
        self.faults = Faults.of(**faults)
        self.token_ttl = token_ttl
        self.key_size = key_size
        self.world = world
        self.dialect = dialect
        self.client_key = (
            (dialect == "published" and world is None) if client_key is None else client_key
        )
        self.client_auth = client_auth or ("private_key_jwt" if dialect == "published" else "draft")
        self.log_path = log
        self.start_timeout = start_timeout
        self.options = list(options or [])  # more `authzkit sandbox` flags (e.g. faults)
        self.process: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] = {}
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> SandboxProcess:
        """Start and wait until it serves (or raise :class:`ConfigError` with its output)."""
        self._tmp = tempfile.TemporaryDirectory(prefix="authzkit-sandbox-")
        ready_file = Path(self._tmp.name) / "ready.json"
        log_path = self.log_path or Path(self._tmp.name) / "sandbox.log"
        command = [
            sys.executable,
            "-m",
            "authzkit",
            "sandbox",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--key-size",
            str(self.key_size),
            "--ready-file",
            str(ready_file),
            "--dialect",
            self.dialect,
        ]
        if self.client_key:
            command += ["--client-key-out", str(Path(self._tmp.name) / "client_key.pem")]
        if self.token_ttl is not None:
            command += ["--token-ttl", str(self.token_ttl)]
        if self.world is not None:
            command += ["--world", str(self.world)]
        command += self.faults.arguments()
        if self.tls is not None:
            command += ["--tls-cert", str(self.tls.cert), "--tls-key", str(self.tls.key)]
        command += self.options
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=children.child_env(),
            preexec_fn=children.leave_interrupts_to_parent,  # stopped by its owner, after locust
        )
        deadline = time.monotonic() + self.start_timeout
        while not ready_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                output = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                raise ConfigError(f"the sandbox process did not become ready:\n{output}")
            time.sleep(0.05)
        self.ready = json.loads(ready_file.read_text(encoding="utf-8"))
        return self

    @property
    def base_url(self) -> str:
        return str(self.ready["base_url"])

    @property
    def auth_url(self) -> str:
        return str(self.ready.get("auth_url") or self.ready["base_url"])

    @property
    def client_id(self) -> str:
        return str(self.ready["client_id"])

    @property
    def client_secret(self) -> Secret:
        return Secret(str(self.ready["client_secret"]))

    @property
    def issuer(self) -> str | None:
        """The OIDC issuer URL (published dialect), else None."""
        issuer = self.ready.get("issuer")
        return str(issuer) if issuer else None

    @property
    def client_key_file(self) -> Path | None:
        """The file holding the demo client's private key (``client_key``), else None."""
        path = self.ready.get("client_key_file")
        return Path(path) if path else None

    def env(self) -> dict[str, str]:
        """``AUTHZKIT_*`` variables that point a child process at this sandbox
        (:func:`~authzkit.wire.children.child_variables`): the draft token path, or
        (published) the issuer with ``AUTHZKIT_CLIENT_AUTH`` and, for ``private_key_jwt``,
        ``AUTHZKIT_CLIENT_KEY_FILE``; on AuthZEN the URL and the dialect only."""
        if self.dialect == AUTHZEN:
            found = {"AUTHZKIT_BASE_URL": self.base_url, "AUTHZKIT_DIALECT": AUTHZEN}
            return found | ({"AUTHZKIT_TLS_CA_FILE": self.tls_ca} if self.tls_ca else {})
        return children.child_variables(
            base_url=self.base_url,
            auth_url=self.auth_url,
            client_id=self.client_id,
            client_secret=self.client_secret.reveal() if self.ready.get("client_secret") else None,
            tls_ca=self.tls_ca,
            issuer=self.issuer,
            client_auth=self.client_auth,
            client_key_file=self.client_key_file,
        )

    def admin(self) -> Any:
        """A :class:`authzkit.sandbox.SandboxAdmin` for its world, sessions and counters
        (trusting ``tls_ca`` over HTTPS)."""
        from authzkit.sandbox import SandboxAdmin
        from authzkit.wire.tls import TlsSettings

        tls = TlsSettings.of(ca_file=self.tls_ca) if self.tls_ca is not None else None
        return SandboxAdmin(self.base_url, tls=tls)

    def stop(self) -> None:
        """SIGTERM, a deadline, then SIGKILL; removes its temporary files."""
        if self.process is not None:
            children.stop_process(self.process)
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SandboxProcess(dialect={self.dialect!r}, base_url={self.ready.get('base_url')!r})"


__all__ = ["SandboxProcess"]


def __getattr__(name: str) -> Any:
    """``child_env``, deprecated here, its former home: it is
    :func:`authzkit.wire.children.child_env` (warned once, then kept)."""
    if name == "child_env":
        from authzkit.wire.deprecation import deprecated

        deprecated(f"{__name__}.{name}", f"authzkit.wire.children.{name}")
        globals()[name] = children.child_env
        return children.child_env
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
