"""A notebook served by Voila on a free port of 127.0.0.1, for the browser tests that drive
a live kernel's widgets (the page Voila serves connects to the kernel that ran the cells)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from authzkit.wire.children import free_port

REPO = Path(__file__).resolve().parents[2]
SERVER_START_SECONDS = 60


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"voila exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "api", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers: serving
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"voila did not serve {url} within {SERVER_START_SECONDS} s:\n{log.read_text()}")


@contextmanager
def voila_serving(
    notebook: Path,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    log: Path | None = None,
) -> Iterator[str]:
    """``notebook`` served by Voila (its kernel working in ``cwd``, the notebook's folder by
    default, without this process's ``AUTHZKIT_*`` but with ``env``); the page's URL. Its
    output goes to ``log`` (beside the notebook by default). Skips when voila is not
    installed."""
    pytest.importorskip("voila", reason="voila is not installed (pip install -e '.[dev]')")
    port = free_port()
    child = {k: v for k, v in os.environ.items() if not k.startswith("AUTHZKIT_")}
    child.update(env or {})
    child["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), child.get("PYTHONPATH")) if p)
    log = log or notebook.with_suffix(".voila.log")
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voila",
                str(notebook),
                "--no-browser",
                f"--port={port}",
                "--Voila.ip=127.0.0.1",
                "--show_tracebacks=True",
            ],
            cwd=cwd or notebook.parent,
            env=child,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_until_serving(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


__all__ = ["voila_serving"]
