"""Bad input to ``authzkit capacity`` is refused before anything starts: exit 2, one line on
stderr naming the culprit, nothing on stdout, no run directory; and the safety rule: on an
environment the command does not start, no search without ``--max-rate`` (refused before
any request, the preflight included).

In-process (``authzkit.cli.main``): every row fails while the command line is checked, so
no sandbox, Locust or request ever starts here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from authzkit.cli import main

SLO = ["--max-p99-ms", "50"]
ROWS = [
    ([], "--max-p99-ms"),  # the SLO is required
    ([*SLO, "--max-p99-ms", "0"], "--max-p99-ms"),
    ([*SLO, "--max-p999-ms", "-1"], "--max-p999-ms"),
    ([*SLO, "--max-p999-ms", "20"], "--max-p999-ms 20 is below --max-p99-ms 50"),
    ([*SLO, "--max-failure-ratio", "2"], "--max-failure-ratio"),
    ([*SLO, "--start-rate", "0"], "--start-rate"),
    ([*SLO, "--start-rate", "fast"], "--start-rate"),
    ([*SLO, "--max-rate", "-5"], "--max-rate"),
    ([*SLO, "--start-rate", "100", "--max-rate", "10"], "--start-rate 100 is above --max-rate 10"),
    ([*SLO, "--precision", "0"], "--precision"),
    ([*SLO, "--precision", "1.5"], "--precision"),
    ([*SLO, "--step-time", "0"], "--step-time"),
    ([*SLO, "--warm-up", "-1"], "--warm-up"),
    ([*SLO, "--step-time", "5", "--warm-up", "5"], "--warm-up 5 must be shorter than"),
    ([*SLO, "--start-rate", "0.1", "--step-time", "5"], "--start-rate 0.1 starts no call"),
    ([*SLO, "--min-capacity", "0"], "--min-capacity"),
    ([*SLO, "--scenario", "token"], "--scenario"),
    ([*SLO, "--processes", "0"], "--processes"),
    ([*SLO, "--arrivals", "bursty"], "--arrivals"),
    ([*SLO, "--max-in-flight", "0"], "--max-in-flight"),
    ([*SLO, "--concurrency", "0"], "--concurrency"),
    ([*SLO, "--latency-ms", "abc"], "--latency-ms"),
    ([*SLO, "--", "--rate", "5"], "--rate is set by `authzkit loadtest`"),
    ([*SLO, "--", "--capacity-dir", "x"], "--capacity-dir is set by `authzkit loadtest`"),
    ([*SLO, "--master", "--expect-workers", "2"], "--master needs AUTHZKIT_BASE_URL"),
    ([*SLO, "--master"], "--master needs --expect-workers N"),
]
ELSEWHERE_ROWS = [
    (SLO, "--max-rate R is required against an environment this command does not start"),
    ([*SLO, "--master", "--expect-workers", "2"], "--max-rate R is required"),
    ([*SLO, "--max-rate", "50", "--concurrency", "2"], "--concurrency: fault flags configure"),
]


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean working directory and environment (no AUTHZKIT_* variable, no .env)."""
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "run"


def refuse(
    argv: list[str], culprit: str, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["capacity", "--out", str(run_dir), *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (argv, out, err)
    assert len(lines) == 1 and culprit in lines[0], (argv, err)
    assert "Traceback" not in err
    assert out == "", (argv, out)  # nothing started, nothing sent
    assert not run_dir.exists(), argv


@pytest.mark.parametrize(("argv", "culprit"), ROWS, ids=[" ".join(a) for a, _ in ROWS])
def test_capacity_refuses_before_anything_starts(
    argv: list[str], culprit: str, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refuse(argv, culprit, run_dir, capsys)


@pytest.mark.parametrize(
    ("argv", "culprit"), ELSEWHERE_ROWS, ids=[" ".join(a) for a, _ in ELSEWHERE_ROWS]
)
def test_a_search_on_an_environment_it_did_not_start_needs_max_rate(
    argv: list[str],
    culprit: str,
    run_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing listens on port 9: a refusal that asked the service anything would say so."""
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AUTHZKIT_CLIENT_ID", "rs")
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", "not-a-real-secret")
    refuse(argv, culprit, run_dir, capsys)
