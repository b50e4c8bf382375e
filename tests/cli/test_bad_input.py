"""Every command, given bad input, refuses in one line before anything starts (issue 22).

One table: each row is a command line a newcomer could type, where it runs (the embedded
sandbox, i.e. no ``AUTHZKIT_*``, or a configured service), and what must name the culprit.
Every row asserts what the user sees: the exit code (2 for bad input), exactly one line on
stderr that starts with ``authzkit`` and names the culprit, no traceback, no secret; and
what is left: no child process, no ``authzkit-*`` temporary folder, no request sent. The
"configured service" is a local HTTP server that counts what reaches it, so "nothing was
sent" is a count of zero (for ``loadtest`` too: no sandbox, no locust, no preflight).

Rows run in-process through ``authzkit.cli.main`` (fast); the rows that hide an optional
extra run in a subprocess whose ``sys.modules`` blocks that library, the way an install
without the extra would fail.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType

import pytest

from authzkit import Sandbox
from authzkit.cli import main
from authzkit.cli.solve import NEEDS_KIND

EMBEDDED = "embedded"  # no AUTHZKIT_* at all: the command would start its own sandbox
SERVICE = "service"  # AUTHZKIT_* point at the counting server below
SANDBOX_EXTRA = 'pip install -e ".[sandbox]"'
LOADTEST_EXTRA = 'pip install -e ".[loadtest]"'
SECRETS = {
    "AUTHZKIT_CLIENT_SECRET": "bad-input-client-secret-7f3a",
    "AUTHZKIT_SUBJECT_TOKEN": "bad-input-subject-token-91c2",
    "AUTHZKIT_ANSWER_PIN": "58213",
}
ROW_DEADLINE_S = 60  # an in-process row that runs longer has started something it should not


@dataclass(frozen=True)
class Row:
    """One bad command line and what its one stderr line must contain."""

    argv: tuple[str, ...]
    culprit: tuple[str, ...]  # every piece must appear in the one stderr line
    where: str = EMBEDDED
    code: int = 2
    stdin: str = ""
    missing: tuple[str, ...] = ()  # libraries made unimportable (runs in a subprocess)
    unset: tuple[str, ...] = ()  # service variables left out for this row
    folders: tuple[str, ...] = ()  # folders made in the working directory first
    # Only a GET under /sandbox/v1/ may reach the service: the row is refused once the
    # environment is known (a sandbox behind AUTHZKIT_BASE_URL may take --subject).
    probe_ok: bool = False

    @property
    def id(self) -> str:
        extra = f"[no {','.join(self.missing)}]" if self.missing else ""
        extra += f" [stdin {self.stdin!r}]" if self.stdin else ""
        extra += f" [folder {','.join(self.folders)}]" if self.folders else ""
        shown = " ".join(arg if arg else "''" for arg in self.argv)
        return f"{self.where}: {shown} {extra}".strip()


def R(*argv: str, culprit: str | tuple[str, ...], **options: object) -> Row:
    pieces = (culprit,) if isinstance(culprit, str) else culprit
    return Row(tuple(argv), pieces, **options)  # type: ignore[arg-type]


ROWS = [
    # -- the parser itself
    R("nonsense", culprit="nonsense"),
    # an option a command does not know: refused by that command, pointing at its own help
    R("token", "--bogus", culprit=("authzkit token: ", "--bogus", "authzkit token --help")),
    R("check", "--bogus", culprit=("authzkit check: ", "--bogus", "authzkit check --help")),
    # -- token / keys
    R("token", "--key-size", "1024", culprit=("--key-size", "1024")),
    R("token", "--dialect", "klingon", culprit=("--dialect", "klingon")),
    R("token", "--dialect", "published", culprit="--dialect", where=SERVICE),
    R("token", "--key-size", "2048", culprit="--key-size", where=SERVICE),
    R("token", culprit=SANDBOX_EXTRA, missing=("starlette",)),
    R("keys", "--key-size", "abc", culprit=("--key-size", "abc")),
    R("keys", "--dialect", "published", culprit="--dialect", where=SERVICE),
    R("keys", culprit=SANDBOX_EXTRA, missing=("uvicorn",)),
    # -- authorize
    R("authorize", culprit="action"),
    R("authorize", "", culprit="action"),
    R("authorize", "two words", culprit="two words"),
    R(
        "authorize",
        "show_account_balance_public",
        "--subject",
        "nope",
        culprit=("--subject", "nope"),
    ),
    R(
        "authorize",
        "read",
        "--subject",
        "bob",
        culprit=("--subject", "AUTHZKIT_SUBJECT_TOKEN"),
        where=SERVICE,
        probe_ok=True,
    ),
    R("authorize", "read", "--key-size", "4096", culprit="--key-size", where=SERVICE),
    # AuthZEN (issue 49): a malformed K=V, an AuthZEN option on the draft, a search kind
    R("authorize", "read", "--dialect", "authzen", "--context", "nokey", culprit="--context"),
    R("authorize", "read", "--subject-property", "=1", culprit="--subject-property"),
    R("authorize", "read", "--context", "a=1", culprit=("--context", "draft")),
    R("search", "everything", culprit=("kind", "everything")),
    R("search", "subject", "--limit", "0", culprit=("--limit", "0")),
    R("search", "action", "--dialect", "draft", culprit="--dialect"),
    # -- solve (item 1: an answer the user gave is sent, or the command refuses)
    R("solve", "transfer_funds", "--answer-stdin", culprit=("--answer-stdin", "no answer")),
    R("solve", "transfer_funds", "--answer-stdin", culprit="--answer-stdin", stdin="\n"),
    R("solve", "add_payee", "--answer-stdin", culprit=NEEDS_KIND, stdin="1234\n"),
    R(
        "solve",
        "transfer_funds",
        "--answer-stdin",
        "--kind",
        "totp",
        culprit="--kind totp",
        stdin="123456\n",
    ),
    R("solve", "transfer_funds", "--kind", "fingerprint", culprit=("--kind", "fingerprint")),
    R(
        "solve",
        "transfer_funds",
        "--answer-stdin",
        "--subject",
        "nope",
        culprit=("--subject", "nope"),
        stdin="9999\n",
    ),
    R("solve", "pay", "--answer-stdin", culprit="--answer-stdin", where=SERVICE),
    R("solve", "pay", "--dialect", "published", culprit="--dialect", where=SERVICE),
    # -- demo
    R("demo", "--action", "", culprit="--action"),
    R("demo", "--challenge-action", "two words", culprit="--challenge-action"),
    R("demo", "--dialect", "nope", culprit="--dialect"),
    R("demo", "--allow-wrong-answers=yes", culprit="--allow-wrong-answers"),
    R("demo", "--key-size", "2048", culprit="--key-size", where=SERVICE),
    R("demo", culprit=SANDBOX_EXTRA, missing=("starlette", "uvicorn")),
    # -- trace (item 6)
    R("trace", "nonsense", culprit="nonsense"),
    R("trace", culprit="flow"),
    R("trace", "plain", "--out", "{folder}", culprit=("--out", "is a directory")),
    R("trace", "plain", "--out", "/proc/x.md", culprit=("--out", "/proc/x.md")),
    R("trace", "plain", "--out", "{file}/x.md", culprit=("--out", "not a directory")),
    R("trace", "plain", culprit=("trace-plain.md", "is a directory"), folders=("trace-plain.md",)),
    R("trace", "plain", "--action", "", culprit="--action"),
    R("trace", "plain", "--challenge-action", "pay", culprit="--challenge-action"),
    R("trace", "bad_jwe_token", "--action", "read", culprit="--action", where=SERVICE),
    R("trace", "plain", "--dialect", "published", culprit="--dialect", where=SERVICE),
    R("trace", "challenge", "--key-size", "3", culprit="--key-size"),
    R("trace", "challenge", "--dialect", "authzen", culprit=("challenge", "AuthZEN")),
    R("trace", "search", culprit=("search", "--dialect authzen")),
    R("trace", "plain", "--out", "/proc/x.md", culprit="/proc/x.md", where=SERVICE),
    R("trace", "plain", culprit=SANDBOX_EXTRA, missing=("starlette",)),
    # -- check (item 6: refused before the first check, not after the last)
    R("check", "--json", "/proc/x.json", culprit=("--json", "/proc/x.json")),
    R("check", "--json", "/proc/x.json", culprit=("--json", "/proc/x.json"), where=SERVICE),
    R("check", "--junit", "{folder}", culprit=("--junit", "is a directory")),
    R("check", "--junit", "{folder}", culprit=("--junit", "is a directory"), where=SERVICE),
    R("check", "--markdown", "/proc/x.md", culprit="--markdown"),
    R("check", "--json", "{file}/r.json", culprit=("--json", "not a directory")),
    R("check", "--dialect", "published", culprit="--dialect", where=SERVICE),
    R("check", "--dialect", "nope", culprit="--dialect"),
    R("check", "--only", "nomatch.*", culprit=("--only", "nomatch")),
    R("check", "--only", "", culprit="--only"),
    R("check", "--challenge-action", "", culprit="--challenge-action"),
    R("check", culprit=SANDBOX_EXTRA, missing=("starlette",)),
    # -- matrix
    R("matrix", "--subject", "nope", culprit=("--subject", "nope")),
    R("matrix", "--dialect", "authzen", "--subject", "nope", culprit=("--subject", "nope")),
    R("matrix", "--dialect", "authzen", "--actions", ",", culprit="--actions"),
    R("matrix", "--dialect", "authzen", "--resources", "r9", culprit=("--resources", "r9")),
    R("matrix", "--actions", "", culprit="--actions"),
    R("matrix", "--resources", ",", culprit="--resources"),
    # A configured service may be a sandbox (which needs neither): one GET of its world asks.
    R("matrix", "--subject", "bob", culprit="--subject", where=SERVICE, probe_ok=True),
    R(
        "matrix",
        culprit="AUTHZKIT_SUBJECT_TOKEN",
        where=SERVICE,
        unset=("AUTHZKIT_SUBJECT_TOKEN",),
        probe_ok=True,
    ),
    R("matrix", "--key-size", "2048", culprit="--key-size", where=SERVICE),
    R("matrix", "--dialect", "zzz", culprit="--dialect"),
    # -- sandbox
    R("sandbox", "--token-ttl", "0", culprit="--token-ttl"),
    R("sandbox", "--port", "70000", culprit="--port"),
    R("sandbox", "--degrade-ms-per-min", "-1", culprit="--degrade-ms-per-min"),
    R("loadtest", "--degrade-ms-per-min", "fast", culprit="--degrade-ms-per-min"),
    R("sandbox", "--key-size", "1000", culprit="--key-size"),
    R("sandbox", "--world", "nope.toml", culprit=("--world", "nope.toml")),
    R("sandbox", "--error-rate", "2", culprit="--error-rate"),
    R("sandbox", "--latency-ms", "abc", culprit="--latency-ms"),
    R("sandbox", "--ready-file", "/proc/x.json", culprit="--ready-file"),
    R("sandbox", "--client-key-out", "{folder}", culprit="--client-key-out"),
    R("sandbox", "--challenge-ttl", "-1", culprit="--challenge-ttl"),
    R("sandbox", "--max-attempts", "0", culprit="--max-attempts"),
    R("sandbox", "--port", "0", culprit=SANDBOX_EXTRA, missing=("starlette", "uvicorn")),
    # -- capacity (its own table: tests/capacity/test_bad_input.py): the SLO, the rate cap
    R("capacity", culprit="--max-p99-ms"),
    R("capacity", "--max-p99-ms", "0", culprit="--max-p99-ms", where=SERVICE),
    R("capacity", "--max-p99-ms", "50", culprit="--max-rate", where=SERVICE),
    # -- loadtest (items 2, 5, 6, 7): refused before a sandbox, locust or a request
    R("loadtest", "-t", "0", culprit="--run-time"),
    R("loadtest", "-t", "0", culprit="--run-time", where=SERVICE),
    R("loadtest", "-t", "-5s", culprit="--run-time", where=SERVICE),
    R("loadtest", "-t", "abc", culprit="--run-time", where=SERVICE),
    R("loadtest", "-u", "0", culprit="--users", where=SERVICE),
    R("loadtest", "-u", "-3", culprit="--users", where=SERVICE),
    R("loadtest", "-r", "-1", culprit="--spawn-rate", where=SERVICE),
    R("loadtest", "--processes", "-5", culprit="--processes"),
    R("loadtest", "--processes", "0", culprit="--processes", where=SERVICE),
    R("loadtest", "--rate", "0", culprit="--rate", where=SERVICE),
    R("loadtest", "--rate", "nan", culprit="--rate", where=SERVICE),
    R("loadtest", "--rate", "-100", culprit="--rate", where=SERVICE),
    R("loadtest", "--max-p95-ms", "-1", culprit="--max-p95-ms", where=SERVICE),
    R("loadtest", "--max-failure-ratio", "2", culprit="--max-failure-ratio", where=SERVICE),
    R("loadtest", "--max-lag-ms", "0", culprit="--max-lag-ms", where=SERVICE),
    # -- the drift verdict (issue 35): a ratio >= 1, points within 0..100, whole seconds
    R("loadtest", "--max-drift", "0", culprit="--max-drift", where=SERVICE),
    R("loadtest", "--max-drift", "-1", culprit="--max-drift", where=SERVICE),
    R("loadtest", "--max-drift", "0.5", culprit="--max-drift"),
    R("loadtest", "--max-drift", "abc", culprit="--max-drift", where=SERVICE),
    R("loadtest", "--max-failure-drift", "-1", culprit="--max-failure-drift", where=SERVICE),
    R("loadtest", "--max-failure-drift", "101", culprit="--max-failure-drift"),
    R("loadtest", "--max-failure-drift", "abc", culprit="--max-failure-drift", where=SERVICE),
    R("loadtest", "--drift-window", "0", culprit="--drift-window", where=SERVICE),
    R("loadtest", "--drift-window", "1.5", culprit="--drift-window"),
    R("loadtest", "--warm-up", "-1", culprit="--warm-up", where=SERVICE),
    R("loadtest", "-t", "10s", "--drift-window", "5", culprit="--drift-window", where=SERVICE),
    R("loadtest", "-t", "20s", "--max-drift", "2", "--warm-up", "30", culprit="--warm-up"),
    R("loadtest", "--token-ttl", "0", culprit="--token-ttl", where=SERVICE),
    R("loadtest", "--token-ttl", "-1", culprit="--token-ttl"),
    R("loadtest", "--wait-time", "-1", culprit="--wait-time", where=SERVICE),
    R("loadtest", "--wait-time", "2-1", culprit="--wait-time", where=SERVICE),
    R("loadtest", "--wait-time", "abc", culprit="--wait-time"),
    R("loadtest", "--subjects", "nope.csv", culprit=("--subjects", "nope.csv"), where=SERVICE),
    R("loadtest", "--out", "/proc/x", culprit=("--out", "/proc/x")),
    R("loadtest", "--out", "/proc/x", culprit=("--out", "/proc/x"), where=SERVICE),
    R("loadtest", "--out", "{file}", culprit="--out", where=SERVICE),
    R("loadtest", "--max-in-flight", "0", culprit="--max-in-flight", where=SERVICE),
    R("loadtest", "--arrivals-seed", "-1", culprit="--arrivals-seed", where=SERVICE),
    R("loadtest", "--action", "", culprit="--action", where=SERVICE),
    R("loadtest", "--dialect", "nope", culprit="--dialect"),
    # -- the AuthZEN dialect: its batches, its one scenario, what a PDP must be told
    R("loadtest", "--dialect", "authzen", "--batch", "0", culprit="--batch"),
    R("loadtest", "--dialect", "authzen", "--batch", "2", "--semantic", "x", culprit="--semantic"),
    R("loadtest", "--batch", "4", culprit=("--batch", "--dialect authzen")),
    R(
        "loadtest",
        "--dialect",
        "authzen",
        "--scenario",
        "challenge",
        culprit="--scenario challenge",
    ),
    R(
        "capacity",
        *("--dialect", "authzen", "--max-p99-ms", "50", "--max-rate", "10"),
        culprit="AUTHZKIT_SUBJECT_ID",
        where=SERVICE,
        probe_ok=True,
    ),
    R("capacity", "--dialect", "authzen", "--max-p99-ms", "50", "--batch", "0", culprit="--batch"),
    R(
        "capacity",
        *("--dialect", "authzen", "--max-p99-ms", "50", "--scenario", "challenge"),
        culprit="--scenario challenge",
    ),
    R("loadtest", "--scenario", "nope", culprit="--scenario"),
    R("loadtest", "--", "-f", "nope.py", culprit="-f"),
    R("loadtest", "--", "-f", "nope.py", culprit="-f", where=SERVICE),
    R("loadtest", "--", "--bogus-locust-flag", culprit="--bogus-locust-flag", where=SERVICE),
    R("loadtest", "--error-rate", "1.5", culprit="--error-rate"),
    R("loadtest", "--latency-ms", "5-1", culprit="--latency-ms"),
    R("loadtest", "-t", "5s", culprit=LOADTEST_EXTRA, missing=("locust",)),
    R("loadtest", "-t", "5s", culprit=LOADTEST_EXTRA, missing=("locust",), where=SERVICE),
    # -- report
    R("report", "nope-dir", culprit="nope-dir"),
    R("report", "{file}", culprit="not a directory"),
    R("report", "{folder}", "--compare", "nope-dir", culprit=("--compare", "nope-dir")),
    R("report", "{folder}", "--max-regression", "-5", culprit="--max-regression"),
    R("report", "{folder}", culprit=LOADTEST_EXTRA, missing=("pandas",)),
]


# -- the counting service ------------------------------------------------------------------


class CountingService(ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 that answers 404 to everything and remembers each
    request line: what a configured environment would have received."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        assert isinstance(self.server, CountingService)
        self.server.requests.append((self.command, self.path))
        body = b'{"type": "srn:error:not_found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def counting_service() -> Iterator[CountingService]:
    server = CountingService()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def service_environ(counting_service: CountingService, row: Row) -> dict[str, str]:
    """Everything a real environment needs, so that only the row's own input is wrong."""
    environ = {
        "AUTHZKIT_BASE_URL": counting_service.url,
        "AUTHZKIT_CLIENT_ID": "bad-input-client",
        "AUTHZKIT_RESOURCE_ID": "5f0c6c1e-0000-4000-8000-00000000bad1",
        "AUTHZKIT_FOREIGN_RESOURCE_ID": "5f0c6c1e-0000-4000-8000-00000000bad2",
        "AUTHZKIT_PLAIN_ACTION": "read",
        "AUTHZKIT_CHALLENGE_ACTION": "pay",
        **SECRETS,
    }
    return {name: value for name, value in environ.items() if name not in row.unset}


# -- what is left behind -------------------------------------------------------------------


def _stat_fields(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # after "pid (comm) ": state, ppid, pgrp, sid


def processes(*, parent: int | None = None, session: int | None = None) -> set[int]:
    """Live processes whose parent (or session) is the one given (zombies included: a
    child nobody waited for is left behind too)."""
    found = set()
    for entry in Path("/proc").iterdir():
        fields = _stat_fields(entry.name) if entry.name.isdigit() else None
        if fields is None:
            continue
        if (parent is not None and int(fields[1]) == parent) or (
            session is not None and int(fields[3]) == session
        ):
            found.add(int(entry.name))
    return found


@dataclass
class Seen:
    code: int
    out: str
    err: str


class Deadline(Exception):
    """An in-process row ran past :data:`ROW_DEADLINE_S`."""


def _expire(signum: int, frame: FrameType | None) -> None:
    raise Deadline(f"still running after {ROW_DEADLINE_S} s")


def run_in_process(
    argv: list[str], row: Row, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Seen:
    monkeypatch.setattr(sys, "stdin", io.StringIO(row.stdin))
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.alarm(ROW_DEADLINE_S)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals and --help end this way
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    return Seen(code, captured.out, captured.err)


_BLOCKING_MAIN = (
    "import sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None  # what `import name` meets when the extra is not installed\n"
    "from authzkit.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def run_without(argv: list[str], row: Row, environ: dict[str, str], cwd: Path) -> Seen:
    """``authzkit ARGV`` in a child whose ``row.missing`` libraries cannot be imported;
    afterwards nothing of its session may still run."""
    child = subprocess.Popen(
        [sys.executable, "-c", _BLOCKING_MAIN, ",".join(row.missing), *argv],
        env=environ,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(row.stdin, timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert processes(session=child.pid) == set(), "a process of the command is still running"
    return Seen(child.returncode, out, err)


# -- the table ------------------------------------------------------------------------------


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A working directory, an existing folder and file, a subjects file for loadtest on
    the service, and a private temp dir."""
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    work, private = tmp_path / "work", tmp_path / "tmp"
    for folder in (work, private, tmp_path / "a-folder"):
        folder.mkdir()
    (tmp_path / "a-file.txt").write_text("not a folder\n")
    (tmp_path / "subjects.csv").write_text(
        "subject_token,resource_id,resource_type,pin\n"
        f"{SECRETS['AUTHZKIT_SUBJECT_TOKEN']},5f0c6c1e-0000-4000-8000-00000000bad1,"
        f"srn:resource:account,{SECRETS['AUTHZKIT_ANSWER_PIN']}\n"
    )
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.setenv("TMPDIR", str(private))
    return {
        "work": work,
        "tmp": private,
        "folder": tmp_path / "a-folder",
        "file": tmp_path / "a-file.txt",
        "subjects": tmp_path / "subjects.csv",
    }


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_bad_input_is_refused_in_one_line_before_anything_starts(
    row: Row,
    scene: dict[str, Path],
    counting_service: CountingService,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [arg.format(folder=scene["folder"], file=scene["file"]) for arg in row.argv]
    if row.where == SERVICE and argv[0] == "loadtest" and "--subjects" not in argv:
        argv[1:1] = ["--subjects", str(scene["subjects"])]  # all a real service needs
    for folder in row.folders:
        (scene["work"] / folder).mkdir()
    environ = service_environ(counting_service, row) if row.where == SERVICE else {}
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    sent_before, children_before = len(counting_service.requests), processes(parent=os.getpid())

    if row.missing:
        seen = run_without(argv, row, dict(os.environ), scene["work"])
    else:
        seen = run_in_process(argv, row, monkeypatch, capsys)

    shown = seen.out + seen.err
    lines = [line for line in seen.err.splitlines() if line.strip()]
    assert "Traceback" not in shown, shown
    assert seen.code == row.code, f"exit {seen.code}, stderr: {seen.err!r}"
    assert len(lines) == 1, f"stderr is not one line: {seen.err!r}"
    assert lines[0].startswith("authzkit"), lines[0]
    for piece in row.culprit:
        assert piece in lines[0], f"{piece!r} not named in {lines[0]!r}"
    for secret in SECRETS.values():
        assert secret not in shown, "a configured secret was printed"
    sent = counting_service.requests[sent_before:]
    allowed = [
        r for r in sent if row.probe_ok and r[0] == "GET" and r[1].startswith("/sandbox/v1/")
    ]
    assert sent == allowed, f"requests reached the service: {sent}"
    assert processes(parent=os.getpid()) <= children_before, "a child process was left"
    assert sorted(p.name for p in scene["tmp"].glob("authzkit-*")) == [], "temp folder left"
    if row.argv[0] == "loadtest":  # no run directory was begun either
        assert not (scene["work"] / "loadtest-out").exists()


def test_the_table_covers_every_command_with_60_rows_or_more() -> None:
    from authzkit.cli.main import build_parser

    commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr, arg-type]
    assert commands <= {row.argv[0] for row in ROWS}
    assert len(ROWS) >= 60
    assert len({row.id for row in ROWS}) == len(ROWS), "two rows are the same"


# -- the traceback rule and the answer typed ------------------------------------------------


def _raise_unexpected(args: object) -> int:
    raise RuntimeError(
        f"boom near {SECRETS['AUTHZKIT_CLIENT_SECRET']} and "
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl\n"
        "on a second line"
    )


def test_an_unexpected_exception_is_one_line_naming_its_type(
    scene: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from authzkit.cli import commands

    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", SECRETS["AUTHZKIT_CLIENT_SECRET"])
    monkeypatch.setattr(commands, "run_keys", _raise_unexpected)
    assert main(["keys"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith("authzkit keys: unexpected RuntimeError: boom near")
    assert "on a second line" in lines[0] and "AUTHZKIT_DEBUG=1" in lines[0]
    assert SECRETS["AUTHZKIT_CLIENT_SECRET"] not in lines[0]
    assert "eyJzdWIiOiJhbGljZSJ9" not in lines[0], "a token-shaped string was printed"

    monkeypatch.setenv("AUTHZKIT_DEBUG", "1")  # the developer's way to the traceback
    with pytest.raises(RuntimeError, match="boom"):
        main(["keys"])


def test_the_answer_given_on_stdin_is_the_one_sent(
    sandbox: Sandbox,
    scene: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 1: `echo 9999 | authzkit solve transfer_funds --answer-stdin` sends 9999 (a
    wrong PIN, refused, exit 1), never the PIN the environment knows; the right one passes."""
    alice = sandbox.world.owned_by("alice")[0]
    assert sandbox.client_secret is not None, "the sandbox's client has no secret"
    for name, value in {
        "AUTHZKIT_BASE_URL": sandbox.base_url,
        "AUTHZKIT_CLIENT_ID": sandbox.client_id,
        "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
        "AUTHZKIT_SUBJECT_TOKEN": sandbox.session_token("alice"),
        "AUTHZKIT_RESOURCE_ID": alice.id,
        "AUTHZKIT_ANSWER_PIN": "1234",
    }.items():
        monkeypatch.setenv(name, value)
    pin = sandbox.world.subject("alice").credentials["pin"]
    argv = ["solve", "transfer_funds", "--answer-stdin"]

    monkeypatch.setattr(sys, "stdin", io.StringIO("9999\n"))
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "challenge_solution" in err and len(err.splitlines()) == 1
    assert sandbox.stats()["authorize"].get("srn:error:bad_challenge_solution") == 1

    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{pin}\n"))
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["shape"] == "B"
