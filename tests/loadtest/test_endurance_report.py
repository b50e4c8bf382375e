"""An endurance run's report, in-process on a hand-made run directory (issue 35): the drift
plot and line, the resources plot, the generator-memory badge, the fault marks on the
timeline plot, the drift in the terminal's summary."""

from __future__ import annotations

import json
from pathlib import Path

from authzkit.loadtest.read import notices, tables
from authzkit.loadtest.read.html import write_html
from authzkit.loadtest.read.plots import DRIFT_PLOT, RESOURCES_PLOT
from authzkit.loadtest.read.plots.endurance import fault_marks
from authzkit.loadtest.record.drift import judge
from authzkit.loadtest.record.timeline import TIMELINE_FILE
from authzkit.loadtest.resources import generator_verdict

from support.endurance import run_of
from support.report_runs import START, write_run

MIB = 1024 * 1024


def endurance_run(directory: Path) -> Path:
    write_run(directory)
    drift = judge(run_of(60, lambda s: 1_000 + 100 * s), max_drift=2.0, window_s=10)
    leaking = {
        "role": "worker 1",
        "pid": 4242,
        "seconds": [float(s) for s in range(60)],
        "rss_bytes": [100 * MIB + s * MIB for s in range(60)],
        "cpu_percent": [50.0] * 60,
        "fds": [12] * 60,
        "threads": [3] * 60,
    }
    summary = json.loads((directory / "summary.json").read_text())
    summary.update(
        drift=drift,
        resources={"processes": [leaking], "generator": generator_verdict([leaking])},
        fault_marks=[{"at": START + 20.5, "fault": "key rotation", "count": 1}],
    )
    summary["thresholds"] = {"checked": True, "passed": False, "problems": drift["problems"]}
    (directory / "summary.json").write_text(json.dumps(summary))
    records = [
        {"second": s, "row": "Aggregated", "count": 100, "p50": 1_000, "p99": 1_000 + 100 * s}
        for s in range(61)
    ]
    timeline = {"start": START, "unit": "us", "records": records}
    (directory / TIMELINE_FILE).write_text(json.dumps(timeline))
    return directory


def test_the_report_plots_the_drift_and_the_resources_and_warns_of_a_growing_generator(
    tmp_path: Path,
) -> None:
    run = tables.load_run(endurance_run(tmp_path / "run"))
    page = write_html(run).read_text(encoding="utf-8")
    assert (run.directory / DRIFT_PLOT).exists() and (run.directory / RESOURCES_PLOT).exists()
    assert 'alt="drift"' in page and 'alt="resources"' in page
    assert 'id="generator-memory"' in page and "worker 1 +60.0 MiB/min" in page
    assert 'id="drift"' in page and "thresholds failed: drift: p99 grew" in page
    assert fault_marks(run) == [(20.5, "key rotation")]
    text = tables.summary_text(run)
    drift_line = notices.drift_line(run.summary)
    assert drift_line is not None and drift_line in text
    assert drift_line.startswith("drift: p99 ") and "(r² 1.00)" in drift_line
