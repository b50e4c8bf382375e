"""The master's roster of its workers (who took part, who never reported, who stopped
reporting), what the terminal and the page say of it, and the run parameters in words.

In-process, with times given (no clock, no locust): the roster is fed as the master's
listeners feed it.
"""

from __future__ import annotations

import json
from pathlib import Path

from authzkit.loadtest.read import notices
from authzkit.loadtest.read.html import write_html
from authzkit.loadtest.read.parameters import readable
from authzkit.loadtest.read.tables import load_run
from authzkit.loadtest.record.workers import (
    STALE_AFTER_S,
    WorkerRoster,
    never_connected,
    read_roster,
)

from support.report_runs import write_run


def test_a_roster_of_two_workers_that_reported_to_the_end() -> None:
    roster = WorkerRoster(expected=2)
    for node in ("pod-a", "pod-b"):
        roster.connected(node, 100.0)
    roster.reported("pod-a", 40, 103.0)
    roster.reported("pod-b", 35, 103.0)
    roster.reported("pod-a", 10, 106.0)
    roster.reported("pod-b", 15, 106.0)
    found = roster.summary(106.5)
    assert found["took_part"] == 2 and found["never_reported"] == 0
    assert found["stopped_reporting"] == []
    assert {n["node"]: n["requests"] for n in found["nodes"]} == {"pod-a": 50, "pod-b": 50}
    assert notices.workers(found) == []
    assert notices.took_part(found) == "2 of 2 expected"


def test_a_worker_that_never_came_and_one_that_went_silent() -> None:
    roster = WorkerRoster(expected=3)
    roster.connected("pod-a", 100.0)
    roster.connected("pod-b", 100.0)
    roster.reported("pod-a", 30, 103.0)
    roster.reported("pod-b", 30, 103.0)
    end = 103.0 + STALE_AFTER_S + 3
    roster.reported("pod-a", 30, end - 0.5)
    found = roster.summary(end)
    assert found["took_part"] == 2 and found["never_reported"] == 1
    assert found["stopped_reporting"] == ["pod-b"]
    # pod-b's loss is the run's problem (one line, in the verdict), not a notice besides
    [problem] = found["problems"]
    assert problem.startswith("worker pod-b stopped reporting ")
    assert notices.workers(found) == [
        "1 of 3 expected worker never reported: the totals count only the 2 that did",
    ]
    # a run recorded before its lost workers were problems still says it in a notice
    del next(n for n in found["nodes"] if n["node"] == "pod-b")["lost"]
    assert notices.workers(found)[1:] == [
        f"worker pod-b stopped reporting {STALE_AFTER_S + 3:g} s before the end: its requests "
        "after its last report are missing from the totals",
    ]


def test_locust_marking_a_worker_missing_is_stopping_too_unless_it_reported_to_the_stop() -> None:
    """pod-a fell silent mid-run; pod-b reported until the stop, then its last report and
    its quit never reached the master (a busy machine's race): Locust marks both missing
    while the master waits for their quits, but only pod-a's load is missing."""
    roster = WorkerRoster(expected=2)
    roster.started(100.0)
    roster.reported("pod-a", 30, 103.0)
    roster.reported("pod-b", 30, 103.0)
    roster.reported("pod-b", 30, 109.5)
    roster.stopped(110.0)
    found = roster.summary(116.0, missing=["pod-a", "pod-b"])
    assert found["stopped_reporting"] == ["pod-a"]
    assert found["problems"] == [
        "worker pod-a stopped reporting 3 s into the run (7 s before the end): about 70 "
        "requests it would have sent at its 10 req/s are missing from the run"
    ]


def test_a_master_that_gave_up_counts_who_never_came(tmp_path: Path) -> None:
    roster = WorkerRoster(expected=2)
    roster.connected("pod-a", 100.0)
    roster.write(tmp_path, 101.0)
    found = never_connected(2, read_roster(tmp_path))
    assert (found["connected"], found["took_part"], found["never_reported"]) == (1, 0, 2)
    assert never_connected(4, None)["never_reported"] == 4
    assert read_roster(tmp_path / "nowhere") is None


def test_the_page_names_the_workers_and_flags_the_silent_one(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    roster = WorkerRoster(expected=2)
    roster.reported("pod-a", 60, 100.0)
    roster.reported("pod-b", 40, 100.0 - 2 * STALE_AFTER_S)
    summary = json.loads((run / "summary.json").read_text())
    summary["workers"] = roster.summary(100.5)
    [problem] = summary["workers"]["problems"]
    # as the master's recorder files it at exit: the lost worker is a problem of the run
    summary["thresholds"] = {"checked": True, "passed": False, "problems": [problem]}
    (run / "summary.json").write_text(json.dumps(summary))
    page = write_html(load_run(run)).read_text()
    assert "workers took part" in page and "2 of 2 expected" in page
    assert page.count("worker pod-b stopped reporting") == 1  # the verdict's, not a notice too


def test_run_parameters_read_as_words(tmp_path: Path) -> None:
    shown = dict(
        readable(
            [
                ("rate", 100000.0),
                ("sandbox", True),
                ("token_ttl", 4),
                ("actions.plain", "read"),
                ("faults.latency_ms", "5"),
                ("spawn_rate", 4),
                ("wait_time", "0"),
                ("brand_new", 1),
            ]
        )
    )
    assert shown["open-model rate"] != "100000.0" and "100" in shown["open-model rate"]
    assert shown["sandbox started for the run"] == "yes"
    assert shown["sandbox token lifetime"] == "4 s"
    assert shown["plain action"] == "read"
    assert shown["sandbox fault --latency-ms"] == "5"
    assert shown["users started"] == "4 users/s"
    assert shown["think time per user"] == "none (back to back)"
    assert shown["brand new"] == "1"  # a key not known yet is still shown
    run = write_run(tmp_path / "run")
    (run / "run.json").write_text(
        json.dumps({"scenario": "authorize", "users": 5, "rate": 100000.0, "sandbox": True})
    )
    page = write_html(load_run(run)).read_text()
    assert "open-model rate" in page and "100000.0" not in page
