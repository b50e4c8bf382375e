"""What a capacity search prints and how it ends: a line per step, then every SLO with its
limit and what was measured at the capacity and at the first rate that broke (✓ or ✗:
:func:`~authzkit.loadtest.read.thresholds.capacity_terminal`), the capacity, the SLO it was
judged against and what limited it; ``report.html``; the exit code.

The same ending serves ``authzkit capacity`` and ``authzkit report DIR`` on a capacity run
(:func:`report_capacity`), both reading ``capacity.json``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.capacity.results import summary_lines
from authzkit.loadtest.capacity.search import BROKE, LAGGED, Verdict

if TYPE_CHECKING:
    from authzkit.loadtest.interrupt import Interrupted


def step_line(verdict: Verdict) -> str:
    """One step as the search goes: offered, achieved, the judged figures, the verdict."""
    result = verdict.result
    line = (
        f"  step {result.index + 1:2d}  {result.offered_per_s:9.1f}/s offered  "
        f"{result.achieved_per_s:9.1f}/s achieved  p50 {result.p50_ms:7.2f} ms  "
        f"p99 {result.p99_ms:7.2f} ms  p99.9 {result.p999_ms:7.2f} ms  failures "
        f"{result.failure_ratio:.4f}  lag p99 {result.lag_p99_ms:5.2f} ms  {verdict.verdict}"
    )
    if verdict.verdict in (BROKE, LAGGED):
        line += f": {verdict.why}"
    return line


def exit_code(document: dict[str, Any], min_capacity: float | None) -> tuple[int, str | None]:
    """0 with a capacity (at least ``min_capacity`` when given), else 1 and why."""
    capacity = document.get("capacity_per_s")
    if capacity is None:
        return 1, f"no capacity: {document.get('why')}"
    if min_capacity is not None and capacity < min_capacity:
        return 1, f"capacity {capacity:,.4g}/s is below --min-capacity {min_capacity:g}"
    return 0, None


def finish(out: Path, min_capacity: float | None, *, quiet: bool = False) -> int:
    """The end of a search: report.html, the last lines, the exit code."""
    from authzkit.loadtest.capacity.page import write_capacity_html
    from authzkit.loadtest.capacity.results import read_capacity
    from authzkit.loadtest.read.thresholds import capacity_terminal

    document = read_capacity(out)
    page = write_capacity_html(out)
    for line in [*capacity_terminal(document), *summary_lines(document)]:
        print(line)
    print(f"report: {page}")
    code, why = exit_code(document, min_capacity)
    if why is not None:
        print(f"authzkit capacity: {why}", file=sys.stderr)
    return code


def interrupted_report(out: Path, stopped: Interrupted) -> int:
    """An interrupted search: the steps judged so far stay in capacity.json (and the page)."""
    from authzkit.loadtest.capacity.page import write_capacity_html

    try:
        page: Path | None = write_capacity_html(out)
    except Exception:  # a page that cannot be drawn must not hide the interruption
        page = None
    if page is not None:
        print(f"report: {page}")
    print(
        f"authzkit capacity: interrupted by {stopped.name}; the steps judged so far are in "
        f"{out / 'capacity.json'}",
        file=sys.stderr,
    )
    return stopped.exit_code


def report_capacity(directory: Path) -> int:
    """``authzkit report DIR`` on a capacity run: the steps, the last lines, report.html."""
    from authzkit.loadtest.capacity.page import write_capacity_html
    from authzkit.loadtest.capacity.results import read_capacity
    from authzkit.loadtest.read.thresholds import capacity_terminal

    document = read_capacity(directory)
    for step in document.get("steps", []):
        print(
            f"  step {step['index'] + 1:2d}  {step['offered_per_s']:9.1f}/s offered  "
            f"{step['achieved_per_s']:9.1f}/s achieved  p99 {step['p99_ms']:7.2f} ms  "
            f"{step['verdict']}"
        )
    for line in [*capacity_terminal(document), *summary_lines(document)]:
        print(line)
    print(f"report: {write_capacity_html(directory)}")
    return 0


__all__ = [
    "exit_code",
    "finish",
    "interrupted_report",
    "report_capacity",
    "step_line",
]
