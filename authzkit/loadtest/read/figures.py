"""The data sent and received, the checks' pass rate and the request phases, said once
for the terminal and the page.

A figure the run did not measure is never shown (docs/internals.md, "Data, checks and
phases").
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from authzkit.loadtest.read.run import AGGREGATED, RunResults, row_label
from authzkit.loadtest.read.units import size

# The clients authzkit's users send through, by user class (run.json's user_class).
_CLIENTS = {
    "Fast": "geventhttpclient's connection pool (authzkit's direct transport)",
    "Open": "geventhttpclient's connection pool (authzkit's direct transport)",
}
_HTTP_SESSION = "Locust's HttpSession (requests)"
PHASES = "connect / TLS / send / wait / receive"


def _data(run: RunResults) -> Mapping[str, Any]:
    found = run.summary.get("data")
    return found if isinstance(found, Mapping) else {}


def _per_second(count: float, seconds: Any) -> str:
    if not isinstance(seconds, int | float) or seconds <= 0:
        return ""
    return f"{size(count / seconds)}/s"


def data_line(run: RunResults) -> str | None:
    """``data sent 12.3 kB (2.46 kB/s), received 45.6 kB (9.12 kB/s): request and response
    bodies …``; None when the run did not count its bytes."""
    data = _data(run)
    if "sent_bytes" not in data:
        return None
    seconds = data.get("seconds")
    parts = []
    for word, key in (("sent", "sent_bytes"), ("received", "received_bytes")):
        count = float(data.get(key) or 0)
        each = _per_second(count, seconds)
        parts.append(f"{word} {size(count)}" + (f" ({each})" if each else ""))
    return f"data {', '.join(parts)}: {data.get('counted', 'bodies')}"


def _checks(run: RunResults) -> tuple[int, int] | None:
    """(passed, failed) over every request of the run; None when none completed."""
    total = run.rows[run.rows["name"] == AGGREGATED]
    if total.empty or not int(total["requests"].iloc[0]):
        return None
    requests, failures = int(total["requests"].iloc[0]), int(total["failures"].iloc[0])
    return requests - failures, failures


def checks_line(run: RunResults) -> str | None:
    """``checks (answer as expected): 99.50 % ✓ 995 ✗ 5``; None without requests."""
    found = _checks(run)
    if found is None:
        return None
    passed, failed = found
    return (
        f"checks (answer as expected): {passed / (passed + failed):.2%} ✓ {passed:,} ✗ {failed:,}"
    )


def _table(css_id: str, header: list[str], rows: list[list[str]]) -> str:
    head = "".join(
        f'<th class="text">{html.escape(h)}</th>' if i == 0 else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(header)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="text">{html.escape(v)}</td>' if i == 0 else f"<td>{html.escape(v)}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table id="{css_id}"><tr>{head}</tr>{body}</table></div>'


def checks_section(run: RunResults) -> list[str]:
    """The page's **Checks**: per row, the requests whose answer was the expected outcome
    (✓), the failures (✗) and the pass rate; nothing without requests."""
    if _checks(run) is None:
        return []
    rows = []
    for _, entry in run.rows.iterrows():
        requests, failures = int(entry["requests"]), int(entry["failures"])
        share = f"{(requests - failures) / requests:.2%}" if requests else ""
        label = row_label(str(entry["type"]), str(entry["name"]))
        rows.append([label, f"{requests - failures:,}", f"{failures:,}", share])
    return [
        "<h2>Checks</h2>",
        '<p class="note">Each request is checked against the outcome the scenario expects '
        "(a challenge 403 is expected in the challenge flow); anything else is a failure, "
        "named by its error type below.</p>",
        _table("checks", ["row", "✓ as expected", "✗ failed", "pass rate"], rows),
    ]


def data_section(run: RunResults) -> list[str]:
    """The page's **Data sent and received**: totals and per second, then per row; one
    line saying the run did not count them when it did not."""
    data = _data(run)
    if "sent_bytes" not in data:
        return [
            "<h2>Data sent and received</h2>",
            '<p class="note" id="data">Not counted: this run\'s summary.json holds no byte '
            "counts (a run recorded before authzkit counted them, or stopped before Locust "
            "wrote its summary).</p>",
        ]
    seconds = data.get("seconds")
    rows = [
        [
            "every row",
            size(float(data.get("sent_bytes") or 0)),
            _per_second(float(data.get("sent_bytes") or 0), seconds),
            size(float(data.get("received_bytes") or 0)),
            _per_second(float(data.get("received_bytes") or 0), seconds),
        ]
    ]
    for row, counts in (data.get("rows") or {}).items():
        sent, received = (
            float(counts.get("sent_bytes") or 0),
            float(counts.get("received_bytes") or 0),
        )
        rows.append(
            [
                row,
                size(sent),
                _per_second(sent, seconds),
                size(received),
                _per_second(received, seconds),
            ]
        )
    over = f" over the run's {seconds:g} s" if isinstance(seconds, int | float) else ""
    return [
        "<h2>Data sent and received</h2>",
        f'<p class="note">{html.escape(str(data.get("counted", "bodies")))}; per second{over}.</p>',
        _table("data", ["", "sent", "sent per second", "received", "received per second"], rows),
    ]


def client(run: RunResults) -> str:
    """The HTTP client the run's users sent through, in words."""
    user_class = str(run.meta.get("user_class") or "")
    for prefix, words in _CLIENTS.items():
        if user_class.startswith(prefix):
            return words
    return _HTTP_SESSION


def phases_note(run: RunResults) -> list[str]:
    """The page's **Request phases**: not timed by this client, and what it does time."""
    return [
        "<h2>Request phases</h2>",
        f'<p class="note" id="phases">{PHASES}: not timed by this client. '
        f"{html.escape(client(run))} times each request as a whole, from before it is sent "
        "(a new connection's connect and TLS included) to the whole answer read; under the "
        "open model from the intended start: the latencies in the rows above. No phase is "
        "shown rather than a number that was not measured.</p>",
    ]


__all__ = [
    "PHASES",
    "checks_line",
    "checks_section",
    "client",
    "data_line",
    "data_section",
    "phases_note",
]
