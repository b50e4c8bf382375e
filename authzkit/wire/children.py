"""Child processes of authzkit: their environment, a free port, a stop with a deadline.

Locust must never run in the caller's process (its gevent monkey-patching hangs Jupyter
kernels and disturbs test runs), and its users need a sandbox they can reach over HTTP, so
the load-test runner, the tests and the benchmarks start locust and the sandbox as
subprocesses of the current interpreter, with authzkit importable from the same place
(:func:`child_env`) and pointed at a sandbox by the ``AUTHZKIT_*`` variables of
:func:`child_variables`. Every wait has a deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

from authzkit.wire.tls import file_variables

STOP_TIMEOUT = 15.0
# The directory that holds the ``authzkit`` package: put first on a child's PYTHONPATH so a
# child finds the same authzkit as its parent, installed or run from a checkout.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: ours, authzkit importable, plus ``extra``."""
    env = dict(os.environ)  # propagated as is; authzkit.wire.config remains the one reader
    env.update(file_variables(env))  # a child may run elsewhere (Locust: in its run folder)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra or {})
    return env


def child_variables(
    *,
    base_url: str,
    auth_url: str,
    client_id: str,
    client_secret: str | None = None,
    tls_ca: str | None = None,
    issuer: str | None = None,
    client_auth: str | None = None,
    client_key_file: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """The ``AUTHZKIT_*`` variables that point a child process at a sandbox: its addresses
    and client (the secret when it has one), the CA bundle that signed its certificate, and
    on the published dialect its ``issuer`` with ``client_auth`` and, for
    ``private_key_jwt``, the client's key file."""
    env = {
        "AUTHZKIT_BASE_URL": base_url,
        "AUTHZKIT_AUTH_URL": auth_url,
        "AUTHZKIT_CLIENT_ID": client_id,
    }
    if client_secret:
        env["AUTHZKIT_CLIENT_SECRET"] = client_secret
    if tls_ca is not None:
        env["AUTHZKIT_TLS_CA_FILE"] = tls_ca
    if issuer is not None:
        env["AUTHZKIT_ISSUER"] = issuer
        if client_auth is not None:
            env["AUTHZKIT_CLIENT_AUTH"] = client_auth
        if client_auth == "private_key_jwt" and client_key_file is not None:
            env["AUTHZKIT_CLIENT_KEY_FILE"] = str(client_key_file)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def leave_interrupts_to_parent() -> None:
    """A child's ``preexec_fn``: the child ignores SIGINT (the disposition survives exec).

    A terminal's Ctrl-C signals the whole process group: a sandbox child would stop at
    once while locust still sends to it, and locust would begin its own shutdown unasked.
    The parent alone reacts, in order: locust stops sending first (SIGTERM), the sandbox
    goes after it. A process started so keeps SIGINT ignored, by the shells' convention
    for background jobs (Python itself then raises no ``KeyboardInterrupt``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_process(
    process: subprocess.Popen[Any], *, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT
) -> int:
    """Ask ``process`` to stop with ``sig``, kill it after ``timeout``; its exit code."""
    if process.poll() is None:
        try:
            process.send_signal(sig)
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait(timeout=timeout)


__all__ = [
    "PACKAGE_ROOT",
    "STOP_TIMEOUT",
    "child_env",
    "child_variables",
    "free_port",
    "leave_interrupts_to_parent",
    "stop_process",
]
