"""Bad input to ``authzkit loadtest``, ``report`` and ``sandbox`` is refused before anything
starts: exit 2, one line on stderr naming the culprit, no traceback, no temporary folder,
no run directory, nothing on stdout (no "against <host>" line: no load was sent).

In-process (``authzkit.cli.main``): every row fails while the command line is checked, so
no sandbox, locust or request ever starts here; the rows that need locust's own parser
(after ``--``) ask it in a short child process, as the command does.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from authzkit.cli import main

RUN = "{run}"  # the row's --out directory, which must not be created
FILE = "{file}"  # an existing file
DIRECTORY = "{directory}"  # an existing directory

LOADTEST_ROWS = [
    (["-t", "0"], "-t/--run-time"),
    (["-t", "0s"], "-t/--run-time"),
    (["-t", "-5"], "-t/--run-time"),
    (["-t", "soon"], "-t/--run-time"),
    (["--max-p95-ms", "-1"], "--max-p95-ms"),
    (["--max-p95-ms", "0"], "--max-p95-ms"),
    (["--max-p95-ms", "nan"], "--max-p95-ms"),
    (["--max-failure-ratio", "2"], "--max-failure-ratio"),
    (["--max-failure-ratio", "-0.1"], "--max-failure-ratio"),
    (["--token-ttl", "0"], "--token-ttl"),
    (["--token-ttl", "-1"], "--token-ttl"),
    (["--token-ttl", "1.5"], "--token-ttl"),
    (["--out", "/proc/x"], "/proc/x"),
    (["--out", FILE], "not a directory"),
    (["--out", f"{FILE}/run"], "not a directory"),
    (["--wait-time", "-1"], "--wait-time"),
    (["--wait-time", "2-1"], "--wait-time"),
    (["--wait-time", "abc"], "--wait-time"),
    (["--subjects", "nope.csv"], "nope.csv"),
    (["--subjects", DIRECTORY], "--subjects"),
    (["-r", "-1"], "-r/--spawn-rate"),
    (["-r", "0"], "-r/--spawn-rate"),
    (["--processes", "-5"], "--processes"),
    (["--processes", "0"], "--processes"),
    (["-u", "0"], "-u/--users"),
    (["-u", "ten"], "-u/--users"),
    (["--rate", "0"], "--rate"),
    (["--rate", "-5"], "--rate"),
    (["--rate", "inf"], "--rate"),
    (["--max-in-flight", "0"], "--max-in-flight"),
    (["--arrivals-seed", "-1"], "--arrivals-seed"),
    (["--arrivals", "bursty"], "--arrivals"),
    (["--max-lag-ms", "0"], "--max-lag-ms"),
    (["--max-lag-ms", "5"], "--max-lag-ms needs --rate"),
    (["--error-rate", "2"], "--error-rate"),
    (["--latency-ms", "abc"], "--latency-ms"),
    (["--latency-ms", "5-1"], "--latency-ms"),
    (["--token-outage", "-1"], "--token-outage"),
    (["--rotate-keys-every", "0"], "--rotate-keys-every"),
    (["--pause-every", "1"], "--pause-ms is required with --pause-every"),
    (["--pause-ms", "-3"], "--pause-ms"),
    (["--service-time-us", "0"], "--service-time-us"),
    (["--concurrency", "0"], "--concurrency"),
    (["--concurrency", "two"], "--concurrency"),
    (["--dialect", "latest"], "--dialect"),
    (["--dialect", "authzen", "--batch", "0"], "--batch"),
    (["--dialect", "authzen", "--batch", "2", "--semantic", "first"], "--semantic"),
    (["--dialect", "authzen", "--semantic", "execute_all"], "--semantic needs --batch"),
    (["--batch", "2"], "--batch: batches of evaluations are AuthZEN's"),
    (["--dialect", "published", "--semantic", "execute_all"], "--semantic: batches"),
    (["--dialect", "authzen", "--scenario", "challenge"], "--scenario challenge"),
    (["--dialect", "authzen", "--scenario", "token"], "--scenario token"),
    (["--dialect", "authzen", "--token-outage", "5"], "--token-outage does not apply"),
    (["--dialect", "authzen", "--token-ttl", "5"], "--token-ttl"),
    (["--dialect", "authzen", "--subjects", FILE], "--subjects: subject tokens"),
    (["--scenario", "browse"], "--scenario"),
    (["--action", "show balance"], "--action"),
    (["--challenge-action", ""], "--challenge-action"),
    (["--", "-f", "nope.py"], "-f is set by `authzkit loadtest`"),
    (["--", "--users", "5"], "--users is set by `authzkit loadtest`"),
    (["--", "--run-time=5s"], "--run-time is set by `authzkit loadtest`"),
    (["--", "--bogus"], "--bogus"),
    (["--", "--stop-timeout", "soon"], "--stop-timeout"),
    (["--", "--action", "x"], "--action"),
    (["--", "--master"], "--master is set by `authzkit loadtest`"),
    (["--", "--worker"], "--worker is set by `authzkit loadtest`"),
    (["--", "--expect-workers", "2"], "--expect-workers is set by `authzkit loadtest`"),
    (["--master"], "--master needs --expect-workers N"),
    (["--expect-workers", "2"], "--expect-workers needs --master"),
    (["--master", "--expect-workers", "0"], "--expect-workers"),
    (
        ["--master", "--expect-workers", "2", "--expect-workers-max-wait", "0"],
        "--expect-workers-max-wait",
    ),
    (["--worker"], "--worker needs --master-host HOST"),
    (["--master-host", "m"], "--master-host needs --worker"),
    (["--master-bind-host", "127.0.0.1"], "--master-bind-host needs --master"),
    (["--worker", "--master-host", "m", "--master-port", "0"], "--master-port"),
    (["--worker", "--master-host", "m", "--master-port", "70000"], "--master-port"),
    (
        ["--master", "--worker", "--expect-workers", "2", "--master-host", "m"],
        "--master and --worker",
    ),
    (["--master", "--expect-workers", "2", "--processes", "2"], "--processes with --master"),
    (["--master", "--expect-workers", "2"], "--master needs AUTHZKIT_BASE_URL"),
    (["--worker", "--master-host", "m"], "--worker needs AUTHZKIT_BASE_URL"),
    (["--worker", "--master-host", "m", "--subjects", "nope.csv"], "nope.csv"),
]
REPORT_ROWS = [
    ([RUN], "no such directory"),
    ([FILE], "not a directory"),
    ([DIRECTORY], "holds no stats.json"),
    ([DIRECTORY, "--max-regression", "5"], "--max-regression needs --compare"),
    ([DIRECTORY, "--compare", DIRECTORY, "--max-regression", "-1"], "--max-regression"),
    ([DIRECTORY, "--compare", RUN], "--compare"),
]
SANDBOX_ROWS = [
    (["--port", "-1"], "--port"),
    (["--port", "70000"], "--port"),
    (["--token-ttl", "0"], "--token-ttl"),
    (["--token-ttl", "-1"], "--token-ttl"),
    (["--challenge-ttl", "0"], "--challenge-ttl"),
    (["--max-attempts", "0"], "--max-attempts"),
    (["--key-size", "1000"], "--key-size"),
    (["--world", "nope.toml"], "nope.toml"),
    (["--ready-file", "/proc/x.json"], "/proc/x.json"),
    (["--ready-file", DIRECTORY], "is a directory"),
    (["--client-key-out", DIRECTORY], "is a directory"),
    (["--error-rate", "1.5"], "--error-rate"),
    (["--pause-ms", "0"], "--pause-ms"),
    (["--service-time-us", "1.5"], "--service-time-us"),
    (["--concurrency", "-1"], "--concurrency"),
    (["--dialect", "latest"], "--dialect"),
]


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A clean working directory and environment (no AUTHZKIT_* variable, no .env), and
    the paths the rows name."""
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    private = tmp_path / "tmp"  # a temp folder of its own: no other process's authzkit-*
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    (work / "a-file.txt").write_text("not a directory\n")
    (work / "a-folder").mkdir()
    yield {
        "run": str(work / "run"),
        "file": str(work / "a-file.txt"),
        "directory": str(work / "a-folder"),
    }


def _temp_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("authzkit-*")}


def run_cli(argv: list[str]) -> int:
    """The exit code ``authzkit`` would end with: returned, or argparse's SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def refuse(
    argv: list[str], culprit: str, place: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> str:
    """Run ``argv``, assert what a user sees of a refusal; the line it printed."""
    argv = [arg.format(**place) for arg in argv]
    before = _temp_folders()
    code = run_cli(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (argv, out, err)
    assert len(lines) == 1, (argv, err)
    assert culprit.format(**place) in lines[0], (argv, err)
    assert "Traceback" not in err and "Empty DataFrame" not in out + err
    assert out == "", (argv, out)  # nothing started, nothing sent
    assert _temp_folders() <= before, argv
    assert not Path(place["run"]).exists(), argv
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "culprit"), LOADTEST_ROWS, ids=[" ".join(a) for a, _ in LOADTEST_ROWS]
)
def test_loadtest_refuses_before_anything_starts(
    argv: list[str], culprit: str, place: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = [] if "--out" in argv else ["--out", RUN]
    refuse(["loadtest", *out, *argv], culprit, place, capsys)


@pytest.mark.parametrize(
    ("argv", "culprit"), REPORT_ROWS, ids=[" ".join(a) for a, _ in REPORT_ROWS]
)
def test_report_refuses_bad_input(
    argv: list[str], culprit: str, place: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    refuse(["report", *argv], culprit, place, capsys)


@pytest.mark.parametrize(
    ("argv", "culprit"), SANDBOX_ROWS, ids=[" ".join(a) for a, _ in SANDBOX_ROWS]
)
def test_sandbox_refuses_before_it_serves(
    argv: list[str], culprit: str, place: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    refuse(["sandbox", *argv], culprit, place, capsys)


@pytest.mark.parametrize(
    ("command", "missing"),
    [
        (["loadtest", "--out", RUN], "locust"),
        (["report", DIRECTORY], "pandas"),
    ],
)
def test_a_missing_extra_is_named_with_its_pip_line(
    command: list[str],
    missing: str,
    place: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the [loadtest] extra: one line with the pip install line, before a sandbox
    starts (the modules are looked up, not imported)."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> object:
        return None if name == missing else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    line = refuse(command, 'pip install -e ".[loadtest]"', place, capsys)
    assert missing in line


@pytest.mark.parametrize(
    ("variables", "culprit"),
    [
        ({"AUTHZKIT_CLIENT_ID": "c"}, "AUTHZKIT_BASE_URL is set but AUTHZKIT_CLIENT_SECRET"),
        ({}, "the header lacks subject_token"),
    ],
    ids=["partial-credentials", "subjects-without-header"],
)
def test_a_worker_checks_its_settings_and_subjects_before_connecting(
    variables: dict[str, str],
    culprit: str,
    place: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AUTHZKIT_BASE_URL set, the rest wrong: still one line, exit 2, nothing started."""
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "http://127.0.0.1:9")
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    refuse(
        ["loadtest", "--worker", "--master-host", "m", "--subjects", FILE], culprit, place, capsys
    )
