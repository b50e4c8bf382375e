"""Which workers took part in a distributed run, as the master saw them.

Why: a worker that never connected or died sends nothing, leaving totals that look
complete; the roster says who reported and who fell silent. Free of locust and of the clock
(docs/internals.md, "The workers a master heard from").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Locust's workers report every 3 s and once more when told to quit: a worker whose last
# report is older than three intervals at the end had stopped reporting.
REPORT_INTERVAL_S = 3.0
STALE_AFTER_S = 3 * REPORT_INTERVAL_S
# Locust marks a worker missing whose quit never arrived, and on a busy machine a worker that
# heard its quit may exit before its last report and its quit reach the master. Such a
# worker reported until the load stopped: within one interval of the stop, give or take a
# busy machine's delay. Marked missing after a longer silence, it was lost during the load.
LAST_HEARD_SLACK_S = 1.5 * REPORT_INTERVAL_S
WORKERS_FILE = "workers.json"
# A worker that heard its master and then nothing for this long stops by itself with
# MASTER_LOST (Locust's own limit is 60 s, and none before the first heartbeat): the master
# answers each heartbeat, one a second, so a silence this long is a master gone.
MASTER_SILENT_S = 15.0
MASTER_LOST = 4


@dataclass
class WorkerRecord:
    """One worker as the master saw it."""

    node: str
    connected_at: float
    reports: int = 0
    requests: int = 0
    last_report_at: float | None = None

    def lost(self, started: float | None, now: float) -> dict[str, Any]:
        """When a worker that stopped reporting fell silent (seconds into the run: its last
        report) and the load it did not send: its own rate while it reported, over the time
        it was silent (an estimate: its requests after its last report never arrived)."""
        last = self.last_report_at if self.last_report_at is not None else now
        begun = started if started is not None and started <= last else self.connected_at
        sending = max(last - begun, 0.0)
        rate = self.requests / sending if sending > 0 else 0.0
        silent = max(now - last, 0.0)
        return {
            "stopped_at_s": round(last - begun, 1),
            "silent_s": round(silent, 1),
            "rate": round(rate, 1),
            "missing_requests": round(rate * silent),
        }


class WorkerRoster:
    """The master's record of its workers: connections, reports, requests per worker."""

    def __init__(self, expected: int | None = None) -> None:
        self.expected = expected
        self.nodes: dict[str, WorkerRecord] = {}
        self.started_at: float | None = None
        self.stopped_at: float | None = None

    def started(self, now: float) -> None:
        """The load started (the master's ``test_start``): when a lost worker stopped is
        counted from here."""
        self.started_at = now
        self.stopped_at = None

    def stopped(self, now: float) -> None:
        """The load stopped (the master's ``test_stop``): a worker's silence is counted up
        to here, not up to the master's exit, which waits for the workers to quit."""
        self.stopped_at = now

    def connected(self, node: str, now: float) -> None:
        """A worker said it is ready (again, after a reconnect: kept as it was)."""
        self.nodes.setdefault(node, WorkerRecord(node, now))

    def reported(self, node: str, requests: int, now: float) -> None:
        """A worker's report arrived, carrying ``requests`` new requests."""
        record = self.nodes.setdefault(node, WorkerRecord(node, now))
        record.reports += 1
        record.requests += max(int(requests), 0)
        record.last_report_at = now

    def summary(self, now: float, missing: Iterable[str] = ()) -> dict[str, Any]:
        """``summary.json``'s ``workers``: who took part and who fell silent. ``missing``
        are the workers Locust itself marked missing (heartbeats stopped)."""
        gone = set(missing)
        end = now if self.stopped_at is None else min(now, self.stopped_at)
        nodes, stopped, lost = [], [], []
        for record in sorted(self.nodes.values(), key=lambda r: r.node):
            silent_s = (
                None if record.last_report_at is None else max(end - record.last_report_at, 0.0)
            )
            node: dict[str, Any] = {
                "node": record.node,
                "reports": record.reports,
                "requests": record.requests,
                "silent_s": None if silent_s is None else round(silent_s, 1),
            }
            limit = LAST_HEARD_SLACK_S if record.node in gone else STALE_AFTER_S
            if record.reports and (silent_s or 0.0) > limit:
                stopped.append(record.node)
                node["lost"] = record.lost(self.started_at, end)
                lost.append(lost_problem(record.node, node["lost"]))
            nodes.append(node)
        took_part = sum(1 for r in self.nodes.values() if r.reports)
        connected_silent = sum(1 for r in self.nodes.values() if not r.reports)
        absent = max((self.expected or 0) - len(self.nodes), 0)
        return {
            "expected": self.expected,
            "connected": len(self.nodes),
            "took_part": took_part,
            "never_reported": absent + connected_silent,
            "stopped_reporting": stopped,
            "nodes": nodes,
            "problems": lost,
        }

    def write(self, directory: Path, now: float) -> Path:
        """``workers.json`` in ``directory``: the roster so far (the master rewrites it at
        each connection, so a master that gave up waiting still leaves it)."""
        path = directory / WORKERS_FILE
        path.write_text(json.dumps(self.summary(now), indent=2) + "\n", encoding="utf-8")
        return path


def lost_problem(node: str, lost: dict[str, Any]) -> str:
    """The one line of a worker lost mid-run (a problem of the run: exit 1)."""
    return (
        f"worker {node} stopped reporting {lost['stopped_at_s']:g} s into the run "
        f"({lost['silent_s']:g} s before the end): about {lost['missing_requests']} requests "
        f"it would have sent at its {lost['rate']:g} req/s are missing from the run"
    )


def never_connected(expected: int, found: dict[str, Any] | None) -> dict[str, Any]:
    """The ``workers`` entry of a master that gave up waiting: what ``workers.json`` said
    (``found``), or nobody, with every expected worker that did not connect counted as
    never reported."""
    roster = dict(found or {})
    connected = int(roster.get("connected") or 0)
    silent = sum(1 for n in roster.get("nodes") or [] if not n.get("reports"))
    roster.update(
        expected=expected,
        connected=connected,
        took_part=int(roster.get("took_part") or 0),
        never_reported=max(expected - connected, 0) + silent,
        stopped_reporting=list(roster.get("stopped_reporting") or []),
        nodes=list(roster.get("nodes") or []),
    )
    return roster


def read_roster(directory: Path) -> dict[str, Any] | None:
    """``workers.json`` of a run directory, None when there is none (or it is unreadable)."""
    try:
        found = json.loads((directory / WORKERS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


__all__ = [
    "LAST_HEARD_SLACK_S",
    "MASTER_LOST",
    "MASTER_SILENT_S",
    "REPORT_INTERVAL_S",
    "STALE_AFTER_S",
    "WORKERS_FILE",
    "WorkerRecord",
    "WorkerRoster",
    "lost_problem",
    "never_connected",
    "read_roster",
]
