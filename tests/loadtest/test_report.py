"""report.py on hand-made run directories: percentiles, failures by type, plots, compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.loadtest.read import tables as report
from authzkit.loadtest.read.html import write_html
from authzkit.loadtest.read.plots import COMPARE_PLOT, PLOTS, SERVICE_TIME_PLOT, SPECTRUM_PLOT
from authzkit.loadtest.read.plots.style import row_colors
from authzkit.loadtest.read.plots.tokens import spans_lifetimes
from authzkit.loadtest.read.run import AGGREGATED, failure_kind

from support.report_runs import write_run


def test_rows_percentiles_and_throughput(tmp_path: Path) -> None:
    run = report.load_run(write_run(tmp_path / "run"))
    authorize = run.row("authorize", "POST")
    assert authorize["requests"] == 100
    assert (authorize["p50"], authorize["p90"], authorize["p95"], authorize["p99"]) == (
        10.0,
        10.0,
        20.0,
        50.0,
    )
    assert authorize["rps"] == pytest.approx(25.0)
    total = run.row(AGGREGATED)
    assert total["requests"] == 102
    assert run.token_calls == 2
    assert report.throughput(run)["authorize"].tolist() == [25, 25, 25, 25]


def test_failures_grouped_by_service_error_type(tmp_path: Path) -> None:
    run = report.load_run(write_run(tmp_path / "run", failures=7))
    grouped = report.failures_by_type(run)
    assert grouped.to_dict("records") == [
        {"error_type": "srn:error:unauthorized", "occurrences": 7, "rows": "POST authorize"}
    ]
    assert run.row("authorize")["failure_ratio"] == pytest.approx(0.07)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("RequestFailure('HTTP 403 srn:error:unauthorized')", "srn:error:unauthorized"),
        (
            "FlowFailure('HTTP 403 srn:error:bad_challenge_solution')",
            "srn:error:bad_challenge_solution",
        ),
        ("CatchResponseError('HTTP 502 <html>bad gateway')", "HTTP 502"),
        ("ConnectionRefusedError(111, 'Connection refused')", "ConnectionRefusedError"),
        ("something odd", "something odd"),
    ],
)
def test_failure_kind(message: str, kind: str) -> None:
    assert failure_kind(message) == kind


def test_html_is_self_contained(tmp_path: Path) -> None:
    run = report.load_run(write_run(tmp_path / "run", failures=3))
    path = write_html(run)
    html = path.read_text()
    assert html.count("data:image/png;base64,") == 3
    assert "srn:error:unauthorized" in html
    assert 'src="http' not in html and "<script" not in html
    for name in PLOTS:
        assert (tmp_path / "run" / name).stat().st_size > 1000


def test_run_without_histograms_still_reports(tmp_path: Path) -> None:
    """A run directory from before histograms: Locust's tables, no spectra, no µs tables."""
    run = report.load_run(write_run(tmp_path / "run"))
    assert not run.histograms and not run.service_times
    assert report.compare_histograms(run, run).empty
    assert "p99_us_baseline" not in report.compare(run, run)
    html = write_html(run, baseline=run).read_text()
    assert "HdrHistogram" not in html and "Compared with" not in html
    for name in (SPECTRUM_PLOT, SERVICE_TIME_PLOT, COMPARE_PLOT):
        assert not (tmp_path / "run" / name).exists(), name


def test_compare_prints_deltas_and_flags_regressions(tmp_path: Path) -> None:
    baseline = report.load_run(write_run(tmp_path / "base"))
    slower = report.load_run(write_run(tmp_path / "slow", slow=30))
    comparison = report.compare(slower, baseline)
    row = comparison[comparison["name"] == "authorize"].iloc[0]
    assert row["p95_delta"] == 30.0 and row["p95_change"] == pytest.approx(1.5)
    found = report.regressions(comparison, max_latency_increase=0.2)
    assert any(line.startswith("POST authorize: p95 20 → 50 ms") for line in found)
    assert report.regressions(report.compare(baseline, baseline), max_latency_increase=0.0) == []


def test_report_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_run(tmp_path / "base")
    slow = write_run(tmp_path / "slow", slow=30)
    assert main(["report", str(base)]) == 0
    assert (base / "report.html").exists()
    assert main(["report", str(slow), "--compare", str(base)]) == 0  # deltas only
    assert "p95_change" in capsys.readouterr().out
    assert main(["report", str(slow), "--compare", str(base), "--max-regression", "20"]) == 1
    assert "regression: POST authorize" in capsys.readouterr().out
    assert main(["report", str(base), "--compare", str(base), "--max-regression", "0"]) == 0
    with pytest.raises(SystemExit) as refused:  # refused while parsing: one line, exit 2
        main(["report", str(tmp_path / "nothing")])
    assert refused.value.code == 2
    assert "nothing: no such directory" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2  # a directory, but not a run's
    assert "holds no stats.json" in capsys.readouterr().err


def test_one_colour_per_row_and_token_calls_only_across_lifetimes(tmp_path: Path) -> None:
    run = report.load_run(write_run(tmp_path / "run"))
    colors = row_colors(run)
    assert list(colors) == ["POST token", "POST authorize", "Aggregated"]
    assert len(set(colors.values())) == 3  # the same row keeps its colour in every plot
    assert spans_lifetimes(run)  # two token calls, lifetime unknown: worth a plot
    run.meta["token_ttl"] = 4  # a 4 s run within two 4 s lifetimes: a sentence instead
    assert not spans_lifetimes(run)
    html = write_html(run).read_text()
    assert "did not span several token lifetimes" in html and 'alt="token_calls"' not in html


def test_a_run_interrupted_before_locust_wrote_its_history_still_loads(tmp_path: Path) -> None:
    # Ctrl-C at the very start: locust created its history file but wrote nothing yet.
    (tmp_path / "run.json").write_text(json.dumps({"interrupted": "SIGINT"}))
    (tmp_path / "locust_stats_history.csv").write_text("")
    assert report.load_run(tmp_path).history.empty
