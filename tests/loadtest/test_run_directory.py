"""One run, one directory: an ``--out`` a live run writes into is refused naming that run's
pid, a finished run is replaced only with ``--overwrite``, and two runs started in the same
second get a directory each (two runs sharing one lost both results, or one silently)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from authzkit.loadtest import run_directory
from authzkit.loadtest.run_directory import LOCK_NAME, claim, release
from authzkit.wire.children import child_env
from authzkit.wire.errors import ConfigError

from support.processes import WAIT_S, start_run


def authzkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        env=child_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


@pytest.mark.slow
def test_a_live_runs_directory_is_refused_then_its_finished_run_kept(tmp_path: Path) -> None:
    out = tmp_path / "run"
    live = start_run(
        out,
        "--rate",
        "5",
        "-t",
        "10m",
        "--quiet",
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        second = authzkit("loadtest", "--rate", "5", "-t", "2s", "--out", str(out), cwd=tmp_path)
        assert (second.returncode, second.stdout) == (2, "")
        assert second.stderr == (
            f"authzkit loadtest: --out {out}: in use by a live run (pid {live.pid}); "
            "give another --out\n"
        )
        live.send_signal(signal.SIGINT)
        assert live.wait(timeout=WAIT_S) == 130
    finally:
        if live.poll() is None:
            os.killpg(live.pid, signal.SIGKILL)
    finished = sorted(p.name for p in out.iterdir())
    assert "summary.json" in finished and "run.json" in finished and LOCK_NAME not in finished
    third = authzkit("capacity", "--max-p99-ms", "50", "--out", str(out), cwd=tmp_path)
    assert third.returncode == 2 and "holds a finished run; give --overwrite" in third.stderr
    assert sorted(p.name for p in out.iterdir()) == finished  # nothing touched


def test_runs_started_in_the_same_second_get_a_directory_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class SameSecond(datetime):
        @classmethod
        def now(cls, tz: object = None) -> SameSecond:
            return cls(2026, 12, 4, 6, 0, 0, tzinfo=UTC)

    monkeypatch.setattr(run_directory, "datetime", SameSecond)
    monkeypatch.chdir(tmp_path)
    first, second = claim(None, "authorize"), claim(None, "authorize")
    assert (first.name, second.name) == ("authorize-20261204-060000", "authorize-20261204-060000-2")
    for directory in (first, second):
        (directory / "run.json").write_text("{}")
        release(directory)
        assert not (directory / LOCK_NAME).exists()


def test_a_finished_run_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text("{}")
    (out / "report.html").write_text("the old report")
    with pytest.raises(ConfigError, match="holds a finished run; give --overwrite"):
        claim(out, "authorize")
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "run.json"]
    assert claim(out, "authorize", overwrite=True) == out
    assert [p.name for p in out.iterdir()] == [LOCK_NAME]  # the old run's files are gone
    release(out)
    assert out.is_dir() and not any(out.iterdir())  # given by the user: kept, even empty
