"""Thresholds as a tester reads them: every limit given is one line in the terminal and one
row of the report, with the figure judged, the limit, what was measured and ✓ or ✗ (the
limits that held too). From ``summary.json`` or ``capacity.json`` (docs/internals.md,
"Thresholds").
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from authzkit.loadtest.read.units import duration, rate
from authzkit.loadtest.record.summary import threshold_table

HELD, BROKEN, NOT_JUDGED = "✓", "✗", "-"
_WORDS = {HELD: "held", BROKEN: "broken", NOT_JUDGED: "not judged"}
_CSS = {HELD: "met", BROKEN: "failed", NOT_JUDGED: "unchecked"}


@dataclass(frozen=True)
class Line:
    """One threshold as shown: the figure judged (with its option), the limit, what was
    measured, and the mark (:data:`HELD`, :data:`BROKEN` or :data:`NOT_JUDGED`)."""

    name: str
    limit: str
    measured: str
    mark: str

    @property
    def verdict(self) -> str:
        """``✓ held``, ``✗ broken`` or ``- not judged``."""
        return f"{self.mark} {_WORDS[self.mark]}"


def _value(value: float, unit: str) -> str:
    """A figure in its unit as read: a duration by magnitude, a ratio to four places, a
    drift ratio as ``1.50x``, percentage points signed."""
    if unit == "ms":
        return duration(value * 1000)
    if unit == "ratio":
        return f"{value:.4f}"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "pp":
        return f"{value:+.2f} pp"
    return f"{value:g}"


def _limit(limit: float, unit: str) -> str:
    """The limit as given on the command line, with its unit: ``<= 50 ms``, ``<= 0.01``."""
    shown = {"ms": f"{limit:g} ms", "x": f"{limit:g}x", "pp": f"+{limit:g} pp"}
    return f"<= {shown.get(unit, f'{limit:g}')}"


def _mark(held: bool | None) -> str:
    return NOT_JUDGED if held is None else (HELD if held else BROKEN)


def entries(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """summary.json's judged limits: its ``thresholds.table``, else (a run recorded before
    the table) the same judgement of the figures it holds."""
    thresholds = summary.get("thresholds") or {}
    table = thresholds.get("table")
    if table is not None:
        return list(table)
    requests = summary.get("requests")
    return threshold_table(
        thresholds, summary.get("drift"), 1 if requests is None else int(requests)
    )


def lines(summary: Mapping[str, Any]) -> list[Line]:
    """Every limit a load run was given, as shown (empty when none was given)."""
    shown = []
    for entry in entries(summary):
        unit = str(entry.get("unit", ""))
        measured = entry.get("measured")
        figure = "" if measured is None else _value(float(measured), unit)
        note = entry.get("note")
        if note:
            figure = f"{figure} ({note})" if figure else str(note)
        shown.append(
            Line(
                name=f"{entry['name']} ({entry['option']})",
                limit=_limit(float(entry["limit"]), unit),
                measured=figure,
                mark=_mark(entry.get("held")),
            )
        )
    return shown


def text(found: Sequence[Line], header: Sequence[str]) -> list[str]:
    """Lines for the terminal, one per threshold, columns aligned under ``header``."""
    if not found:
        return []
    rows = [list(header), *([t.name, t.limit, t.measured, t.verdict] for t in found)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(r, widths, strict=False)), r[-1]]).rstrip()
        for r in rows
    ]


def terminal(summary: Mapping[str, Any]) -> list[str]:
    """The thresholds block of the terminal's summary: a title saying how many broke, then
    one line each; empty when no limit was given."""
    found = lines(summary)
    if not found:
        return []
    broken = sum(t.mark == BROKEN for t in found)
    title = f"thresholds: {broken} of {len(found)} broken" if broken else "thresholds: all held"
    return [title, *text(found, ("threshold", "limit", "measured", ""))]


def html_table(found: Sequence[Line], header: Sequence[str], css_id: str) -> str:
    """The report's table: one row per threshold, its verdict cell coloured."""
    head = "".join(
        f'<th class="text">{html.escape(h)}</th>' if i == 0 else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(header)
    )
    body = "".join(
        f'<tr class="threshold"><td class="text">{html.escape(t.name)}</td>'
        f"<td>{html.escape(t.limit)}</td><td>{html.escape(t.measured)}</td>"
        f'<td class="{_CSS[t.mark]}">{html.escape(t.verdict)}</td></tr>'
        for t in found
    )
    return f'<div class="scroll"><table id="{css_id}"><tr>{head}</tr>{body}</table></div>'


def section(summary: Mapping[str, Any]) -> list[str]:
    """The report's **Thresholds** section: the table, or one line when none was given."""
    found = lines(summary)
    if not found and "thresholds" not in summary:
        return [
            "<h2>Thresholds</h2>",
            '<p class="note" id="no-thresholds">Not judged: the run left no summary.json '
            "(Locust stopped before writing it).</p>",
        ]
    if not found:
        return [
            "<h2>Thresholds</h2>",
            '<p class="note" id="no-thresholds">No threshold was given (--max-p95-ms, '
            "--max-p99-ms, --max-p999-ms, --max-failure-ratio, --max-lag-ms, --max-drift, "
            "--max-failure-drift).</p>",
        ]
    return [
        "<h2>Thresholds</h2>",
        html_table(found, ("threshold", "limit", "measured", "verdict"), "thresholds"),
    ]


# -- a capacity search's SLOs ---------------------------------------------------------------

_SLOS = (
    ("max_p99_ms", "p99", "--max-p99-ms", "p99_ms", "ms"),
    ("max_p999_ms", "p99.9", "--max-p999-ms", "p99.9_ms", "ms"),
    ("max_failure_ratio", "failure ratio", "--max-failure-ratio", "failure_ratio", "ratio"),
)


def _capacity_steps(document: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The steps an SLO is read at: the capacity found (the highest rate held below the
    lowest that broke) and that lowest rate that broke, whichever the search has."""
    steps = list(document.get("steps") or [])
    broke = [s for s in steps if s.get("verdict") == "broke"]
    knee = min(broke, key=lambda s: s["offered_per_s"]) if broke else None
    held = [
        s
        for s in steps
        if s.get("verdict") == "held"
        and (knee is None or s["offered_per_s"] < knee["offered_per_s"])
    ]
    found: list[tuple[str, Mapping[str, Any]]] = []
    if held:
        best = max(held, key=lambda s: s["offered_per_s"])
        found.append((f"at {rate(best['offered_per_s'])} (capacity)", best))
    if knee is not None:
        found.append((f"at {rate(knee['offered_per_s'])} (first broke)", knee))
    return found


def capacity_lines(document: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """A capacity search's SLOs: the header (SLO, limit, then a column per step read) and
    one row per SLO given, each cell the figure measured at that step with ✓ or ✗."""
    slo = document.get("slo") or {}
    steps = _capacity_steps(document)
    header = ["SLO", "limit", *(label for label, _ in steps)]
    rows = []
    for key, name, option, figure, unit in _SLOS:
        limit = slo.get(key)
        if limit is None:
            continue
        cells = [f"{name} ({option})", _limit(float(limit), unit)]
        for _, step in steps:
            value = step.get(figure)
            if value is None:
                cells.append(NOT_JUDGED)
                continue
            mark = BROKEN if float(value) > float(limit) else HELD
            cells.append(f"{_value(float(value), unit)} {mark}")
        rows.append(cells)
    return header, rows


def capacity_terminal(document: Mapping[str, Any]) -> list[str]:
    """The SLO lines a capacity search prints (empty before any step was judged)."""
    header, rows = capacity_lines(document)
    if not rows or len(header) == 2:
        return []
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in table
    ]


def capacity_section(document: Mapping[str, Any]) -> list[str]:
    """The capacity page's **SLO** table (nothing before any step was judged)."""
    header, rows = capacity_lines(document)
    if not rows or len(header) == 2:
        return []
    head = "".join(
        f'<th class="text">{html.escape(h)}</th>' if i == 0 else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(header)
    )

    def cell(value: str) -> str:
        css = "failed" if value.endswith(BROKEN) else "met" if value.endswith(HELD) else ""
        return f'<td class="{css}">{html.escape(value)}</td>'

    body = "".join(
        f'<tr class="threshold"><td class="text">{html.escape(r[0])}</td>'
        f"<td>{html.escape(r[1])}</td>{''.join(cell(v) for v in r[2:])}</tr>"
        for r in rows
    )
    return [
        "<h2>SLO</h2>",
        f'<div class="scroll"><table id="slo"><tr>{head}</tr>{body}</table></div>',
    ]


__all__ = [
    "BROKEN",
    "HELD",
    "NOT_JUDGED",
    "Line",
    "capacity_lines",
    "capacity_section",
    "capacity_terminal",
    "entries",
    "html_table",
    "lines",
    "section",
    "terminal",
    "text",
]
