"""Reporting a run: at the end of ``authzkit loadtest``, and for ``authzkit report``.

Both read a run directory and print the summary, write the PNGs and ``report.html``; a
run's report may be partial (interrupted), ``report --compare`` judges it against another
(docs/internals.md, "Reporting a run").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.arguments import require_extra
from authzkit.loadtest.roles import GAVE_UP
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.interrupt import Interrupted


def _warn(line: str) -> None:
    print(f"authzkit loadtest: warning: {line}", file=sys.stderr, flush=True)


def report_run(out: Path, code: int, stopped: Interrupted | None, *, html: bool = True) -> int:
    """Print the summary and write report.html (unless ``html`` is false: ``--no-report``),
    partial when interrupted; a run that sent no request, or left no results, exits 1 (2
    when locust refused its configuration) and says why in one line."""
    from authzkit.loadtest.read import notices, tables

    run = tables.load_run(out)
    requests = notices.request_count(run)
    if requests:
        print(tables.summary_text(run))
    if html:
        from authzkit.loadtest.read.html import write_html

        print(f"report: {write_html(run, plots=stopped is None)}")  # an interrupt: no plots
    else:
        print(f"report: not written (--no-report); `authzkit report {out}` writes it")
    if stopped is not None:
        said = notices.interrupted_after(run) or f"interrupted by {stopped.name}"
        print(f"authzkit loadtest: {said}; the partial results stay in {out}", file=sys.stderr)
        return stopped.exit_code
    if not requests:
        print(
            f"authzkit loadtest: no request was sent: {notices.no_requests_reason(run)}",
            file=sys.stderr,
        )
        return code if code in (2, GAVE_UP) else 1
    for line in notices.shortfall(run.summary.get("schedule") or {}):
        _warn(line)
    for line in notices.lag_warning(run.summary):
        _warn(line)
    for line in notices.workers(run.summary.get("workers") or {}):
        _warn(line)
    for line in notices.generator_memory(run.summary):
        _warn(line)
    return code


def _load_runs(args: argparse.Namespace) -> tuple[Any, Any]:
    """The run and the baseline (None without ``--compare``); a :class:`ConfigError` for a
    directory that is not a run, or a missing extra."""
    require_extra("report")
    from authzkit.loadtest.read import tables

    if args.max_regression is not None and args.compare is None:
        raise ConfigError("--max-regression needs --compare OTHER_DIR")
    try:
        run = tables.load_run(args.directory)
        baseline = tables.load_run(args.compare) if args.compare else None
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from exc
    return run, baseline


def run_report(args: argparse.Namespace) -> int:
    """Print the tables, write the PNGs and report.html; compare when asked (and judge the
    regressions before the page is written, so its badge says what the exit code says)."""
    from authzkit.loadtest.capacity.results import is_capacity_run
    from authzkit.loadtest.read import notices, tables
    from authzkit.loadtest.read.html import write_html

    if is_capacity_run(args.directory) and args.compare is None:
        from authzkit.loadtest.capacity.output import report_capacity

        require_extra("report")
        return report_capacity(args.directory)
    run, baseline = _load_runs(args)
    print(tables.summary_text(run))
    if baseline is None:
        print(f"report: {write_html(run)}")
        return 0
    for line in notices.model_mismatch(run, baseline):
        print(f"authzkit report: warning: {line}", file=sys.stderr)
    comparison = tables.compare(run, baseline)
    print(f"\ncompared with {args.compare} (change = this run vs the baseline):")
    print(tables.format_comparison(comparison))
    found = (
        None
        if args.max_regression is None
        else tables.regressions(comparison, max_latency_increase=args.max_regression / 100.0)
    )
    page = write_html(run, baseline=baseline, regressions=found, max_regression=args.max_regression)
    print(f"report: {page}")
    for line in found or []:
        print(f"regression: {line}")
    return 1 if found else 0


__all__ = ["report_run", "run_report"]
