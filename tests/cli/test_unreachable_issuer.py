"""An unreachable issuer is one line on stderr, not the client's retries and then that line.

The client retries the discovery document (``retry 1 of 2``…); the command line keeps those
progress lines to itself unless ``AUTHZKIT_DEBUG=1`` asks for them. Run as a child process:
in-process, pytest's own log handlers would swallow the lines the user would see.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

RUN_FAILED = 1  # authzkit.cli.failures: the service or the run failed


class _NotFound(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        body = b'{"type": "srn:error:not_found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def answering_url() -> Iterator[str]:
    """A service that answers (404) at the base URL, so only the issuer is unreachable."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(argv: list[str], answering_url: str, **extra: str) -> subprocess.CompletedProcess[str]:
    environ = {
        name: value for name, value in os.environ.items() if not name.startswith("AUTHZKIT_")
    }
    environ.update(
        AUTHZKIT_BASE_URL=answering_url,
        AUTHZKIT_ISSUER=f"http://127.0.0.1:{_closed_port()}",
        AUTHZKIT_CLIENT_ID="unreachable-client",
        AUTHZKIT_CLIENT_SECRET="unreachable-secret",
        AUTHZKIT_SUBJECT_TOKEN="unreachable-subject-token",
        AUTHZKIT_RESOURCE_ID="5f0c6c1e-0000-4000-8000-00000000bad1",
        **extra,
    )
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *argv],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("argv", [["token"], ["authorize", "read"]], ids=" ".join)
def test_an_unreachable_issuer_is_one_line(argv: list[str], answering_url: str) -> None:
    done = _run(argv, answering_url)
    lines = done.stderr.splitlines()
    assert done.returncode == RUN_FAILED, done.stderr
    assert len(lines) == 1, f"stderr is not one line: {done.stderr!r}"
    assert lines[0].startswith(f"authzkit {argv[0]}: "), lines[0]
    assert "gave up after 3 attempts" in lines[0]


def test_authzkit_debug_shows_the_retries(answering_url: str) -> None:
    done = _run(["token"], answering_url, AUTHZKIT_DEBUG="1")
    assert "retry 1 of 2" in done.stderr
    assert "retry 2 of 2" in done.stderr
