"""What a report says before any number: no request sent, interrupted, the generator fell
behind, a regression found, two runs of different models; and words, not keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.loadtest.read import notices, tables as report
from authzkit.loadtest.read.html import write_html

from support.report_runs import entry, write_run

SCHEDULE = {
    "rate": 1e9,
    "intended": 200,
    "sent": 200,
    "late": 200,
    "lag_p99_us": 2600,
    "cap_reached": 200,
    "peak_in_flight": 1000,
    "seconds": 3.0,
    "began_at": 1796412345.25,
}


def _meta(directory: Path, **changes: object) -> None:
    meta = json.loads((directory / "run.json").read_text())
    (directory / "run.json").write_text(json.dumps({**meta, **changes}))


def _summary(directory: Path, **changes: object) -> None:
    summary = json.loads((directory / "summary.json").read_text())
    (directory / "summary.json").write_text(json.dumps({**summary, **changes}))


def test_a_run_without_requests_says_why_and_never_dumps_a_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "stats.json").write_text("[]")
    (run_dir / "run.json").write_text(
        json.dumps({"scenario": "authorize", "users": 20000, "spawn_rate": 20000, "run_time": "2s"})
    )
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "Empty DataFrame" not in out and "no request was sent" in out
    page = (run_dir / "report.html").read_text()
    assert 'id="no-requests"' in page and "lower -u or raise -r/-t" in page
    assert "20000 users" in notices.no_requests_reason(report.load_run(run_dir))


def test_an_interrupted_run_without_locust_numbers_still_reports(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"scenario": "token", "interrupted": "SIGTERM"}))
    page = write_html(report.load_run(run_dir)).read_text()
    assert "Interrupted by SIGTERM" in page and "before any request completed" in page


def test_a_generator_that_fell_behind_is_named_with_its_figures(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run")
    _summary(run_dir, schedule=SCHEDULE)
    _meta(run_dir, rate=1e9)
    [line] = notices.shortfall(SCHEDULE)
    assert "1,000,000,000/s" in line and "200 of 200 starts" in line
    assert "in-flight cap held back 200" in line
    page = write_html(report.load_run(run_dir)).read_text()
    assert 'id="offered-load"' in page
    # the schedule in words and units, not summary.json's keys
    assert "schedule lag p99" in page and "2.60 ms" in page and "lag_p99_us" not in page
    assert "2026-12-04 19:25:45.250000 UTC" in page and "1796412345" not in page
    assert "1000000000.0" not in page.split("<h2>Run parameters")[0]


def test_a_generator_that_kept_up_raises_nothing() -> None:
    kept_up = {**SCHEDULE, "late": 1, "cap_reached": 0}  # 0.5 %: under the 1 % bar
    assert notices.shortfall(kept_up) == []


def test_every_percentile_a_badge_names_is_on_the_page(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run")
    _summary(
        run_dir,
        thresholds={
            "checked": True,
            "passed": False,
            "max_p95_ms": 1,
            "p95_ms": 20.0,
            "problems": ["Aggregated p95 20 ms > --max-p95-ms 1"],
        },
    )
    page = write_html(report.load_run(run_dir)).read_text()
    assert "Aggregated p95 20 ms &gt; --max-p95-ms 1" in page
    assert "<b>20.0 ms</b><span>Aggregated p95 (judged by --max-p95-ms)</span>" in page


def test_a_regression_shows_on_the_page_as_in_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_run(tmp_path / "base")
    slow = write_run(tmp_path / "slow", slow=30)
    assert main(["report", str(slow), "--compare", str(base), "--max-regression", "20"]) == 1
    page = (slow / "report.html").read_text()
    assert "thresholds not checked" not in page
    assert "regression beyond +20 %: POST authorize: p95 20 → 50 ms" in page
    assert main(["report", str(base), "--compare", str(base), "--max-regression", "20"]) == 0
    assert "no regression beyond +20 %" in (base / "report.html").read_text()
    capsys.readouterr()


def test_comparing_open_with_closed_loop_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = write_run(tmp_path / "closed")
    open_run = write_run(tmp_path / "open")
    _meta(open_run, rate=200)
    assert main(["report", str(open_run), "--compare", str(closed)]) == 0
    err = capsys.readouterr().err
    assert "open model (200/s), the baseline closed loop" in err
    assert 'id="model-mismatch"' in (open_run / "report.html").read_text()
    assert main(["report", str(closed), "--compare", str(closed)]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("meta", "short", "detailed"),
    [
        ({"rate": 200, "arrivals": "poisson"}, "open model (200/s)", "open model, 200/s (poisson)"),
        ({"rate": 200}, "open model (200/s)", "open model, 200/s (constant)"),
        ({"users": 10, "rate": None}, "closed loop", "closed loop, 10 users"),
    ],
)
def test_the_load_model_is_named_by_one_rule(
    meta: dict[str, object], short: str, detailed: str
) -> None:
    """The headline's load figure and the comparison's warning say the model alike: a rate
    in run.json is the open model."""
    assert notices.load_model(meta) == short
    assert notices.load_model(meta, detail=True) == detailed


def test_a_row_with_one_request_reads_its_rate_over_the_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    entries = [entry("POST", "authorize", {10: 150}, seconds=15), entry("POST", "token", {5: 1})]
    entries[1]["last_request_timestamp"] = entries[1]["start_time"]  # one request, no span
    (run_dir / "stats.json").write_text(json.dumps(entries))
    (run_dir / "run.json").write_text(json.dumps({"scenario": "authorize"}))
    run = report.load_run(run_dir)
    assert run.row("token")["rps"] == pytest.approx(1 / 15)
    assert run.row("authorize")["rps"] == pytest.approx(10.0)
