"""Ctrl-C's report (issue 47, item 1, the report's side): after an interrupted run, the partial
report, the terminal's summary and ``authzkit report`` count the same requests — those
``summary.json`` recorded, also when Locust's ``stats.json`` is empty (``[]``) or short —
and say "interrupted after N s" with the run's real duration, not the run time asked.

One real run, interrupted as a terminal's Ctrl-C does it (SIGINT to the whole process group),
read by every test here; the ``stats.json`` Locust can leave behind is then written over a
copy of its directory.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from authzkit.cli import main

from support.processes import WAIT_S, processes_naming, start_run

pytestmark = pytest.mark.slow

ASKED_S = 600  # -t 10m: the run time asked, never reached


class Interrupted:
    """What the interrupted command left: its exit code, its output, its directory."""

    def __init__(self, code: int, stdout: str, stderr: str, out: Path) -> None:
        self.code, self.stdout, self.stderr, self.out = code, stdout, stderr, out
        self.summary: dict[str, Any] = json.loads((out / "summary.json").read_text())

    def said_after(self, text: str) -> str:
        """The duration ``text`` says the run was interrupted after (``4.6 s``): the one the
        run measured (summary.json's ``run_s``), not the run time asked."""
        found = re.search(r"[Ii]nterrupted (?:by SIGINT )?after ([\d.]+) s", text)
        assert found is not None, text
        assert (
            float(found.group(1)) == self.summary.get("run_s") and float(found.group(1)) < ASKED_S
        )
        return f"{found.group(1)} s"


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    tmp = tmp_path_factory.mktemp("interrupted")
    out = tmp / "run"
    process = start_run(
        out,
        "--rate",
        "40",
        "-t",
        "10m",
        "--quiet",
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, stderr = _interrupt(process)
    return Interrupted(process.returncode, stdout, stderr, out)


def _interrupt(process: subprocess.Popen[str]) -> tuple[str, str]:
    """A terminal's Ctrl-C: SIGINT to the run's whole process group; what it printed."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        return process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


def test_locust_stopped_before_the_sandbox_and_nothing_is_left_running(
    interrupted: Interrupted,
) -> None:
    """The terminal's SIGINT reaches locust and the sandbox too: the command alone stops
    them, locust first. Before, the sandbox died with the signal while locust sent on to it
    for its whole ``--stop-timeout`` (about 200 TransportError rows)."""
    with (interrupted.out / "locust_failures.csv").open() as failures:
        assert list(csv.DictReader(failures)) == []  # no call met a stopped sandbox
    log = (interrupted.out / "locust.log").read_text()
    assert "unexpected state" not in log  # users stopped, not killed mid-call
    assert processes_naming(str(interrupted.out.parent)) == []


def test_the_partial_report_leaves_its_plots_to_authzkit_report(
    interrupted: Interrupted,
) -> None:
    """Written at once, so the command exits at once: every table, no PNG (matplotlib was
    three of the four seconds after the signal), and the line that draws them."""
    page = (interrupted.out / "report.html").read_text()
    assert f"authzkit report {interrupted.out}</code> draws them" in page
    assert not list(interrupted.out.glob("*.png"))


def _aggregated(text: str) -> int:
    """The requests of the terminal rows table's ``Aggregated`` line."""
    found = re.search(r"^\s*Aggregated\s+([\d,]+)\s", text, re.MULTILINE)
    assert found is not None, text
    return int(found.group(1).replace(",", ""))


def _page_requests(page: str) -> int:
    """The requests of the page's rows table's ``Aggregated`` row."""
    rows = page.split("<h2>Rows</h2>")[1].split("</table>")[0]
    found = re.search(r'<td class="text">Aggregated</td><td>([\d,]+)</td>', rows)
    assert found is not None, rows
    return int(found.group(1).replace(",", ""))


def test_the_command_says_after_how_long_and_counts_what_summary_json_recorded(
    interrupted: Interrupted,
) -> None:
    run = interrupted
    assert run.code == 130, run.stdout + run.stderr
    assert _aggregated(run.stdout) == run.summary["requests"] > 0
    assert "no request was sent" not in run.stdout + run.stderr
    seconds = run.said_after(run.stderr)
    said = f"interrupted by SIGINT after {seconds}; the partial results stay in {run.out}"
    assert said in run.stderr
    assert f"Interrupted by SIGINT after {seconds}: partial results" in run.stdout


def test_every_call_sent_before_the_signal_is_a_row(interrupted: Interrupted) -> None:
    schedule, latency = interrupted.summary["schedule"], interrupted.summary["latency_us"]
    assert schedule["sent"] == latency["POST authorize"]["count"] > 0


def test_the_partial_report_says_the_real_duration_and_counts_the_same_requests(
    interrupted: Interrupted,
) -> None:
    run = interrupted
    page = (run.out / "report.html").read_text()
    assert _page_requests(page) == run.summary["requests"]
    assert 'id="no-requests"' not in page
    seconds = run.said_after(page)
    assert f"Interrupted by SIGINT after {seconds}: partial results" in page
    planned = re.search(r"schedule ran for</td><td[^>]*>([^<]*)<", page)
    assert planned is not None  # the real seconds, not the 600.0 s the schedule planned
    assert planned.group(1) == f"{seconds} (interrupted; {ASKED_S:.1f} s planned)"
    assert f"<b>interrupted after {seconds}</b><span>duration (10m asked)</span>" in page


@pytest.mark.parametrize("left", ["empty", "short"])
def test_authzkit_report_counts_what_summary_json_recorded_when_stats_json_lacks_it(
    interrupted: Interrupted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    left: str,
) -> None:
    """Locust stopped at the wrong moment leaves ``stats.json`` as ``[]`` (or without a
    row); summary.json, written first, holds every request with its latency."""
    copy = tmp_path / "run"
    shutil.copytree(interrupted.out, copy)
    entries = json.loads((copy / "stats.json").read_text())
    kept = [] if left == "empty" else [e for e in entries if e["name"] == "token"]
    (copy / "stats.json").write_text(json.dumps(kept))
    assert main(["report", str(copy)]) == 0
    out = capsys.readouterr().out
    requests = interrupted.summary["requests"]
    assert "no request was sent" not in out and _aggregated(out) == requests
    seconds = interrupted.said_after(out)
    assert f"Interrupted by SIGINT after {seconds}: partial results" in out
    latency = interrupted.summary["latency_us"]
    for row, figures in latency.items():  # every row summary.json recorded, with its count
        shown = rf"^\s*{re.escape(row)}\s+{figures['count']}\s"
        assert re.search(shown, out, re.MULTILINE), (row, out)
    page = (copy / "report.html").read_text()
    assert _page_requests(page) == requests and 'id="no-requests"' not in page


def test_workers_stop_sending_at_the_signal(tmp_path: Path) -> None:
    """``--processes 2``: the workers stop sending when the run is interrupted too. Before,
    they heard only Locust's "quit" and let their schedules run on for ``--stop-timeout``
    (5 s): twice the calls of the seconds the run said it lasted."""
    rate = 40
    out = tmp_path / "run"
    process = start_run(
        out,
        *("--rate", str(rate), "-t", "10m", "--processes", "2", "--quiet"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, stderr = _interrupt(process)
    assert process.returncode == 130, stdout + stderr
    summary = json.loads((out / "summary.json").read_text())
    # evenly spaced starts: no more calls than the schedule meant by the signal (+1 s)
    assert 0 < summary["requests"] <= rate * (summary["run_s"] + 1), summary["run_s"]
    assert "Not all users finished" not in (out / "locust.log").read_text()
    assert processes_naming(str(out)) == []
