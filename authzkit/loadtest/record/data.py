"""Data sent and received: the request and response bodies of every HTTP row, counted per
row in the Locust process as each request is reported.

Bodies only: no client tells the bytes of request lines and headers. Free of locust
(docs/internals.md, "Data sent and received").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from authzkit.loadtest.record.histograms import row_key

SENT_BYTES = "authzkit_sent_bytes"  # the request's context: the body's length, in bytes
COUNTED = "request and response bodies (the clients do not report header bytes)"


def sent_bytes(response: Any, context: Any) -> int | None:
    """The length of the body a request sent, from what its client reported: the direct
    transport's context, else the prepared request of Locust's ``HttpSession`` response;
    None when neither tells (not an HTTP request)."""
    if isinstance(context, dict):
        sent = context.get(SENT_BYTES)
        if sent is not None:
            return int(sent)
    request = getattr(response, "request", None)
    if request is None:
        return None
    body = getattr(request, "body", None)
    if body is None:
        return 0
    if isinstance(body, str):
        return len(body.encode("utf-8"))
    if isinstance(body, bytes | bytearray | memoryview):
        return len(body)
    return None  # a stream: its length is not known here


class DataCounter:
    """One process's body bytes per row: ``[requests counted, sent, received]``."""

    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}

    def record(self, request_type: str, name: str, sent: int | None, received: int) -> None:
        """One request's bodies; nothing for a row that is no HTTP request (no body sent
        reported, none received)."""
        if sent is None and not received:
            return
        row = self.rows.get(row_key(request_type, name))
        if row is None:
            row = self.rows[row_key(request_type, name)] = [0, 0, 0]
        row[0] += 1
        row[1] += sent or 0
        row[2] += received or 0

    def drain(self) -> dict[str, list[int]]:
        """What was counted since the last drain (a worker's report), and start again."""
        drained, self.rows = self.rows, {}
        return drained

    def add(self, drained: Mapping[str, Any] | None) -> None:
        """Add another process's :meth:`drain` (exact: counts add up)."""
        for row, counts in (drained or {}).items():
            mine = self.rows.setdefault(row, [0, 0, 0])
            for i, value in enumerate(list(counts)[:3]):
                mine[i] += int(value)

    def reset(self) -> None:
        self.rows = {}

    def summary(self, seconds: float | None) -> dict[str, Any]:
        """``summary.json``'s ``data``: totals, per row, and the run's ``seconds`` they
        were sent in (the report's per-second figures divide by them)."""
        rows = {
            row: {"requests": counts[0], "sent_bytes": counts[1], "received_bytes": counts[2]}
            for row, counts in sorted(self.rows.items())
        }
        return {
            "counted": COUNTED,
            "sent_bytes": sum(r["sent_bytes"] for r in rows.values()),
            "received_bytes": sum(r["received_bytes"] for r in rows.values()),
            "seconds": seconds,
            "rows": rows,
        }


__all__ = ["COUNTED", "SENT_BYTES", "DataCounter", "sent_bytes"]
