"""Thresholds as a tester reads them (issue 47, item 4): every limit given is one line in the
terminal and one row of report.html with its limit, what was measured and ✓ or ✗, held ones
too; p95 in the rows tables; drift shaded as failed only when a drift limit broke; the data
sent and received, the checks' pass rate, and the request phases said to be not timed.

Two short real runs (one per HTTP client: the open model's direct transport and Locust's
``HttpSession``), each read by several tests; the drift limits and a capacity search's SLOs
on hand-made run directories (their figures judged as the run judges them).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_rgb

from authzkit.cli import main
from authzkit.loadtest.capacity import Search, Slo, StepResult, answer, judge as judge_step
from authzkit.loadtest.capacity.results import CAPACITY_FILE, capacity_document, write_json
from authzkit.loadtest.read.plots.endurance import drift_figure
from authzkit.loadtest.record.drift import judge
from authzkit.loadtest.record.summary import build_summary
from authzkit.wire.children import child_env

from support.endurance import run_of
from support.report_runs import write_run

WAIT_S = 150.0  # a deadline for a child, never an assertion on time
HTTP = ("GET", "POST")  # the rows of HTTP requests (not the challenge's JWE and FLOW rows)


def _authzkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


class Finished:
    """A run's exit code, its terminal output and the files it left."""

    def __init__(self, done: subprocess.CompletedProcess[str], out: Path) -> None:
        self.code, self.stdout, self.stderr, self.out = (
            done.returncode,
            done.stdout,
            done.stderr,
            out,
        )
        self.summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
        self.stats: list[dict[str, Any]] = json.loads((out / "stats.json").read_text())
        self.page = (out / "report.html").read_text()

    def block(self, title: str, count: int) -> list[str]:
        return _block(self.stdout, title, count)


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """The open model, five limits: a p95 and a p99.9 of 1 µs (no answer is that fast:
    broken), a p99, a failure ratio of 1 and a schedule lag of a minute (held whatever
    happens)."""
    tmp = tmp_path_factory.mktemp("judged")
    done = _authzkit(
        *("loadtest", "--rate", "20", "-t", "2s", "--quiet", "--out", str(tmp / "run")),
        *("--max-p95-ms", "0.001", "--max-p99-ms", "60000", "--max-p999-ms", "0.001"),
        *("--max-failure-ratio", "1", "--max-lag-ms", "60000"),
        cwd=tmp,
    )
    return Finished(done, tmp / "run")


@pytest.fixture(scope="module")
def session_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """A closed loop of Locust's HttpUser (requests), no limit given."""
    tmp = tmp_path_factory.mktemp("session")
    done = _authzkit(
        *("loadtest", "-u", "2", "-t", "2s", "--wait-time", "0.02-0.05", "--quiet"),
        *("--out", str(tmp / "run")),
        cwd=tmp,
    )
    return Finished(done, tmp / "run")


pytestmark = pytest.mark.slow


def test_every_limit_given_is_a_line_with_limit_measured_and_a_mark_held_ones_too(
    judged_run: Finished,
) -> None:
    run = judged_run
    assert run.code == 1, run.stdout + run.stderr  # the broken limits decide the exit code
    title, header, *lines = run.block("thresholds:", 7)
    assert title == "thresholds: 2 of 5 broken"
    assert header.split() == ["threshold", "limit", "measured"]
    judged = run.summary["thresholds"]
    assert [line.split("  ")[0] for line in lines] == [
        "Aggregated p95 (--max-p95-ms)",
        "Aggregated p99 (--max-p99-ms)",
        "Aggregated p99.9 (--max-p999-ms)",
        "failure ratio (--max-failure-ratio)",
        "schedule lag p99 (--max-lag-ms)",
    ]
    assert _cells(lines[0]) == ["<= 0.001 ms", _duration(judged["p95_ms"] * 1000), "✗ broken"]
    assert _cells(lines[1]) == ["<= 60000 ms", _duration(judged["p99_ms"] * 1000), "✓ held"]
    assert _cells(lines[2]) == ["<= 0.001 ms", _duration(judged["p99.9_ms"] * 1000), "✗ broken"]
    assert _cells(lines[3]) == ["<= 1", f"{judged['failure_ratio']:.4f}", "✓ held"]
    lag = judged["lag_p99_ms"]
    assert _cells(lines[4]) == ["<= 60000 ms", _duration(lag * 1000), "✓ held"]
    assert [problem.split(" > ")[1] for problem in judged["problems"]] == [
        "--max-p95-ms 0.001",
        "--max-p999-ms 0.001",
    ]


def test_the_report_has_one_row_per_limit_with_its_verdict(judged_run: Finished) -> None:
    table = re.search(r'<table id="thresholds">(.*?)</table>', judged_run.page)
    assert table is not None, "no thresholds table on the page"
    rows = re.findall(r'<tr class="threshold">(.*?)</tr>', table.group(1))
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert [(c[0], c[1], c[3]) for c in cells] == [
        ("Aggregated p95 (--max-p95-ms)", "&lt;= 0.001 ms", "✗ broken"),
        ("Aggregated p99 (--max-p99-ms)", "&lt;= 60000 ms", "✓ held"),
        ("Aggregated p99.9 (--max-p999-ms)", "&lt;= 0.001 ms", "✗ broken"),
        ("failure ratio (--max-failure-ratio)", "&lt;= 1", "✓ held"),
        ("schedule lag p99 (--max-lag-ms)", "&lt;= 60000 ms", "✓ held"),
    ]
    p95 = judged_run.summary["thresholds"]["p95_ms"]
    assert cells[0][2] == _duration(p95 * 1000)


def test_the_rows_tables_show_the_p95_a_limit_judges(judged_run: Finished) -> None:
    header = next(line for line in judged_run.stdout.splitlines() if line.split()[:1] == ["row"])
    assert header.split()[5:] == ["p50", "p90", "p95", "p99", "p99.9", "max"]
    aggregated = next(
        line for line in judged_run.stdout.splitlines() if line.split()[:1] == ["Aggregated"]
    )
    p95 = judged_run.summary["thresholds"]["p95_ms"]  # the figure judged, the one shown
    assert _duration(p95 * 1000) in aggregated
    rows_table = judged_run.page.split("<h2>Rows</h2>")[1].split("</table>")[0]
    assert "<th>p90</th><th>p95</th><th>p99</th>" in rows_table


def test_data_sent_and_received_are_the_bodies_the_direct_transport_counted(
    judged_run: Finished,
) -> None:
    _assert_data(judged_run)


def test_data_sent_and_received_are_the_bodies_the_http_session_counted(
    session_run: Finished,
) -> None:
    assert session_run.code == 0, session_run.stdout + session_run.stderr
    _assert_data(session_run)
    assert 'id="no-thresholds"' in session_run.page  # none given: said, no empty table
    assert "thresholds:" not in session_run.stdout


def _assert_data(run: Finished) -> None:
    """Every HTTP row's received bytes are Locust's own count of its response bodies, its
    sent bytes were counted for every request, and the terminal and the page say them."""
    data = run.summary["data"]
    locust = {f"{e['method']} {e['name']}": e for e in run.stats}
    assert set(data["rows"]) == {row for row, e in locust.items() if e["method"] in HTTP}
    for row, counted in data["rows"].items():
        assert counted["requests"] == locust[row]["num_requests"], row
        assert counted["received_bytes"] == locust[row]["total_content_length"], row
    authorize = data["rows"]["POST authorize"]
    assert authorize["sent_bytes"] >= authorize["requests"] > 0  # a body with every call
    assert data["sent_bytes"] == sum(r["sent_bytes"] for r in data["rows"].values())
    line = next(line for line in run.stdout.splitlines() if line.startswith("data sent "))
    assert "request and response bodies" in line and "/s)" in line
    assert '<table id="data">' in run.page
    # checks: every request's answer was the expected outcome, or it was a failure
    requests, failures = run.summary["requests"], run.summary["failures_total"]
    checks = next(line for line in run.stdout.splitlines() if line.startswith("checks "))
    assert checks.endswith(f"✓ {requests - failures:,} ✗ {failures:,}")
    assert '<table id="checks">' in run.page
    # the phases: said to be not timed, never given a number
    phases = re.search(r'<p class="note" id="phases">(.*?)</p>', run.page)
    assert phases is not None
    assert phases.group(1).startswith("connect / TLS / send / wait / receive: not timed")


def test_drift_limits_are_rows_too_held_or_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seconds = run_of(20, lambda s: 1_000 + 200 * s)  # slows as it runs
    failed = {s: 1 for s in range(15, 20)}
    drift = judge(seconds, failed, max_drift=1.5, max_failure_drift=50, window_s=5, warm_up_s=1)
    summary = build_summary(
        requests=2_000,
        failures=5,
        p95_ms=4.0,
        errors=[],
        counters=[],
        max_p95_ms=None,
        max_failure_ratio=None,
        drift=drift,
    )
    directory = write_run(tmp_path / "run")
    (directory / "summary.json").write_text(json.dumps(summary))
    assert main(["report", str(directory)]) == 0
    out = capsys.readouterr().out
    title, _, grew, failing = _block(out, "thresholds:", 4)
    assert title == "thresholds: 1 of 2 broken"
    ratio = drift["last"]["p99"] / drift["first"]["p99"]
    points = (drift["last"]["failure_ratio"] - drift["first"]["failure_ratio"]) * 100
    assert grew.startswith("drift: last / first window p99 (--max-drift)")
    assert _cells(grew) == ["<= 1.5x", f"{ratio:.2f}x", "✗ broken"]
    assert failing.startswith("failure drift: last - first window (--max-failure-drift)")
    assert _cells(failing) == ["<= +50 pp", f"{points:+.2f} pp", "✓ held"]
    page = (directory / "report.html").read_text()
    assert page.count('<tr class="threshold">') == 2


def test_drift_png_shades_red_only_a_drift_limit_given_and_broken() -> None:
    """The last window judged is red when a drift limit broke, never in a run whose drift no
    limit judged (it failed nothing); the first window, the reference, is never red."""
    seconds = run_of(20, lambda s: 1_000 + 200 * s)  # slows as it runs
    broken = judge(seconds, max_drift=1.5, window_s=5, warm_up_s=1)
    unjudged = judge(seconds, window_s=5, warm_up_s=1)  # the same run, no limit
    held = judge(seconds, max_drift=10, window_s=5, warm_up_s=1)
    assert not broken["passed"] and not unjudged["checked"] and held["passed"]

    def red_shades(section: dict[str, Any]) -> list[str]:
        """The labels of drift.png's window shades drawn red."""
        axes = drift_figure(section).axes[0]
        found = []
        for patch in axes.patches:
            label = str(patch.get_label())
            r, g, b = to_rgb(patch.get_facecolor())
            if "window:" in label and r > 0.7 and g < 0.3 and b < 0.3:
                found.append(label.split(":")[0])
        return found

    assert red_shades(broken) == ["last window"]
    assert red_shades(unjudged) == [] and red_shades(held) == []


def test_a_capacity_search_says_each_slo_at_the_capacity_and_where_it_broke(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slo = Slo(max_p99_ms=50.0, max_p999_ms=200.0, max_failure_ratio=0.01)
    steps = [
        judge_step(_step(0, 10, p99=12.0, p999=30.0), slo),
        judge_step(_step(1, 20, p99=80.0, p999=150.0), slo),
    ]
    search = Search(start_rate=10, precision=1.0)
    document = capacity_document(
        slo=slo, search=search, settings={}, steps=steps, found=answer(steps, search)
    )
    directory = tmp_path / "capacity"
    directory.mkdir()
    write_json(directory / CAPACITY_FILE, document)
    assert main(["report", str(directory)]) == 0
    out = capsys.readouterr().out
    header, p99, p999, failures = _block(out, "SLO ", 4)
    assert header.split("  ")[0] == "SLO" and "at 10.0/s (capacity)" in header
    assert "at 20.0/s (first broke)" in header
    assert p99.startswith("p99 (--max-p99-ms)")
    assert _cells(p99) == ["<= 50 ms", "12.0 ms ✓", "80.0 ms ✗"]
    assert _cells(p999) == ["<= 200 ms", "30.0 ms ✓", "150 ms ✓"]
    assert _cells(failures) == ["<= 0.01", "0.0000 ✓", "0.0000 ✓"]
    page = (directory / "report.html").read_text()
    assert '<table id="slo">' in page and page.count('<tr class="threshold">') == 3


def _step(index: int, rate: float, *, p99: float, p999: float) -> StepResult:
    return StepResult(
        index=index,
        offered_per_s=rate,
        achieved_per_s=rate,
        requests=1_000,
        failures=0,
        p50_ms=p99 / 2,
        p99_ms=p99,
        p999_ms=p999,
        lag_p99_ms=0.5,
    )


def _block(text: str, title: str, count: int) -> list[str]:
    """``count`` terminal lines from the first one starting with ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    return lines[start : start + count]


def _cells(line: str) -> list[str]:
    """A terminal table's line cut at its column gaps (two spaces or more), name dropped."""
    return re.split(r"\s{2,}", line.strip())[1:]


def _duration(microseconds: float) -> str:
    from authzkit.loadtest.read.units import duration

    return duration(microseconds)
