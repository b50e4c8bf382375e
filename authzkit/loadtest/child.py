"""Running ``locust`` as a child: its command line, its run time, its live totals.

Locust runs headless in a subprocess (never in the caller's process: see
:mod:`authzkit.wire.children`), writes its results into the run directory, and stops by
itself after ``--run-time``; the runner reads its periodically rewritten CSV only to show
progress, never for final numbers.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from authzkit.loadtest.record.face import LIVE_FILE, START_MODULE

OUTPUT_FILE = "locust.out"  # the child's stdout and stderr (its usage errors go there)
# ``python -m locust`` with Locust's import made cheaper (:mod:`authzkit.loadtest.record.start`)
LOCUST = (sys.executable, "-m", START_MODULE)


def locust_command(
    locustfile: Path,
    user_classes: list[str],
    *,
    host: str,
    users: int,
    spawn_rate: float,
    run_time: str,
    out: Path | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    """The ``python -m locust`` command line of a headless run that stops by itself.

    With ``out`` it writes Locust's CSV (full history), ``stats.json`` (exact final numbers),
    ``locust.html``, our ``summary.json`` and the log into that directory.
    """
    command = [
        *LOCUST,
        "-f",
        str(locustfile),
        "--headless",
        "--users",
        str(users),
        "--spawn-rate",
        f"{spawn_rate:g}",
        "--run-time",
        str(run_time),
        "--host",
        host,
        "--stop-timeout",
        "5",
        "--only-summary",
    ]
    if out is not None:
        command += [
            "--csv",
            str(out / "locust"),
            "--csv-full-history",
            "--json-file",
            str(out / "stats"),
            "--html",
            str(out / "locust.html"),
            "--summary-file",
            str(out / "summary.json"),
            "--logfile",
            str(out / "locust.log"),
        ]
    return command + list(extra or []) + list(user_classes)


def worker_command(locustfile: Path, user_classes: Sequence[str], extra: list[str]) -> list[str]:
    """The ``python -m locust`` command line of a worker: it connects to its master (the
    role's options are in ``extra``) and takes the run's shape, and its user class among
    ``user_classes``, from it."""
    return [*LOCUST, "-f", str(locustfile), *extra, *user_classes]


def live_totals(out: Path) -> dict[str, float] | None:
    """The ``Aggregated`` row of the periodically rewritten ``locust_stats.csv`` (progress
    display only: that file lags and is not rewritten at shutdown), its p95 in µs
    (``p95_us``) from the µs histograms of ``live.json`` when the run writes it (Locust's
    CSV has whole milliseconds: ``0`` for a fast service), else from the CSV; and from
    ``live.json`` the p99 of the last whole seconds (``recent_p99_us``) once it has one,
    and the seconds of load so far (``run_s``: counted from the start of the load)."""
    try:
        with (out / "locust_stats.csv").open(newline="", encoding="utf-8") as handle:
            found = next((r for r in csv.DictReader(handle) if r.get("Name") == "Aggregated"), None)
            if found is None:
                return None
            totals = {
                "requests": float(found["Request Count"]),
                "failures": float(found["Failure Count"]),
                "rps": float(found["Requests/s"]),
                "p95_us": float(found["95%"]) * 1000 if found["95%"] not in ("", "N/A") else 0.0,
            }
    except (OSError, ValueError, KeyError):
        return None
    totals.update(_live_figures(out))
    return totals


def _live_figures(out: Path) -> dict[str, float]:
    """The p95 (µs) of ``live.json``, the run's histograms so far, and the p99 of its last
    whole seconds (``recent_p99_us``); empty before it holds any."""
    try:
        live = json.loads((out / LIVE_FILE).read_text(encoding="utf-8"))
        # the seconds of load so far (from the run's start, not from a master's wait)
        run = {"run_s": float(live["run_s"])} if "run_s" in live else {}
        if not live.get("count"):
            return run
        found = {**run, "p95_us": float(live["p95_us"])}
        if live.get("recent_count"):
            found["recent_p99_us"] = float(live["recent_p99_us"])
        return found
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


__all__ = ["LOCUST", "OUTPUT_FILE", "live_totals", "locust_command", "worker_command"]
