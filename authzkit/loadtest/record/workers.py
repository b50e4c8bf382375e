"""Which workers took part in a distributed run, as the master saw them.

A master counts only what reaches it: a worker that never connected (it exited at start,
missing its settings or its subjects file) sends nothing, and one that died mid-run just
stops sending. Both leave totals that look complete. So the master keeps a roster: each
worker that connected, the reports it sent and the requests they carried, and when its
last report came. At exit the roster says how many workers took part, how many of the
``--expect-workers`` never reported, and which stopped reporting well before the end;
``summary.json`` carries that as ``workers`` and the report flags it.

Free of locust (:mod:`~authzkit.loadtest.record.listeners` feeds it) and of the clock
(callers pass the time), so it is tested in-process.
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
WORKERS_FILE = "workers.json"


@dataclass
class WorkerRecord:
    """One worker as the master saw it."""

    node: str
    connected_at: float
    reports: int = 0
    requests: int = 0
    last_report_at: float | None = None


class WorkerRoster:
    """The master's record of its workers: connections, reports, requests per worker."""

    def __init__(self, expected: int | None = None) -> None:
        self.expected = expected
        self.nodes: dict[str, WorkerRecord] = {}

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
        nodes, stopped = [], []
        for record in sorted(self.nodes.values(), key=lambda r: r.node):
            silent_s = None if record.last_report_at is None else now - record.last_report_at
            if record.reports and (record.node in gone or (silent_s or 0.0) > STALE_AFTER_S):
                stopped.append(record.node)
            nodes.append(
                {
                    "node": record.node,
                    "reports": record.reports,
                    "requests": record.requests,
                    "silent_s": None if silent_s is None else round(silent_s, 1),
                }
            )
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
        }

    def write(self, directory: Path, now: float) -> Path:
        """``workers.json`` in ``directory``: the roster so far (the master rewrites it at
        each connection, so a master that gave up waiting still leaves it)."""
        path = directory / WORKERS_FILE
        path.write_text(json.dumps(self.summary(now), indent=2) + "\n", encoding="utf-8")
        return path


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
    "REPORT_INTERVAL_S",
    "STALE_AFTER_S",
    "WORKERS_FILE",
    "WorkerRecord",
    "WorkerRoster",
    "never_connected",
    "read_roster",
]
