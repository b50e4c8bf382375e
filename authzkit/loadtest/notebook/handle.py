"""The :class:`Run` a notebook holds (``run(...)`` of :mod:`.start` returns one) and ``load``.

A :class:`Run` is a run directory (:attr:`Run.path`) and, while its command still goes, the
child process writing it. Everything it offers comes from the report functions of
:mod:`authzkit.loadtest.read` on that directory (read once, after the run has ended): the
rows, the throughput and timeline tables, the histograms, the verdict and its problems, the
plots, the page, the comparison with another run. Reading any of them waits for the run's end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.notebook.background import INTERVAL_S, Child, signal_name

if TYPE_CHECKING:
    import pandas as pd

    from authzkit.loadtest.notebook.live import TextView, WidgetView
    from authzkit.loadtest.read.run import RunResults


class Run:
    """One load-test run: ``run(...)`` returns it, ``load(path)`` reads an earlier one."""

    def __init__(self, path: str | Path, child: Child | None = None) -> None:
        self.path = Path(path)
        self._child = child
        self._data: RunResults | None = None
        self._html: str | None = None
        self._ended = threading.Event()
        self._watcher: threading.Thread | None = None
        self.error: BaseException | None = None  # what went wrong while watching
        if child is None:
            self._ended.set()

    # -- the run while it goes ------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True until the command has ended."""
        return not self._ended.is_set()

    def stop(self) -> Run:
        """End the run now, cleanly: locust and the sandbox stop and the partial report is
        written (the command's Ctrl-C). Returns at once; :meth:`wait` for the end."""
        if self._child is not None:
            self._child.stop()
        return self

    def wait(self, timeout: float | None = None) -> Run:
        """Block until the run has ended (at most ``timeout`` seconds); the run. The
        kernel's interrupt (Ctrl-C) while it waits stops the run, as Stop does."""
        if self._watcher is not None and self._watcher is not threading.current_thread():
            try:
                self._watcher.join(timeout)
            except KeyboardInterrupt:
                self.stop()
                self._watcher.join()
        elif self._child is not None and self.running:
            self._follow(None)
        if self.error is not None:
            raise self.error
        return self

    def _follow(self, view: TextView | WidgetView | None) -> None:
        """Poll the child each interval until it ends, showing its figures on ``view``."""
        child = self._child
        assert child is not None
        try:
            while child.running:
                if view is not None:
                    view.update(child.figures())
                time.sleep(INTERVAL_S)
            child.wait()
        except KeyboardInterrupt:  # the kernel's interrupt, or Ctrl-C: Stop
            child.stop()
            child.wait()
        finally:
            self._ended.set()
            child.close()

    # -- what the run wrote ---------------------------------------------------------------

    @property
    def data(self) -> RunResults:
        """What the run measured, as :func:`~authzkit.loadtest.read.load_run` reads it
        (a :class:`~authzkit.loadtest.read.RunResults`; waits for the end)."""
        if self._data is None:
            self.wait()
            from authzkit.loadtest.read.run import load_run

            self._data = load_run(self.path)
        return self._data

    @property
    def meta(self) -> dict[str, Any]:
        """``run.json``: what was asked, the host, the exit code, an interruption."""
        return self.data.meta

    @property
    def summary(self) -> dict[str, Any]:
        """``summary.json``: counts, failures, thresholds, latencies (µs), drift."""
        return self.data.summary

    @property
    def exit_code(self) -> int | None:
        """The command's exit code (0 passed or unjudged, 1 failed, 128 + signal stopped)."""
        if self._child is not None and self._child.process.returncode is not None:
            return int(self._child.process.returncode)
        code = self.data.meta.get("exit_code")
        return None if code is None else int(code)

    @property
    def interrupted(self) -> str | None:
        """``SIGINT`` or ``SIGTERM`` when the run was stopped before its end, else None."""
        found = self.data.meta.get("interrupted")
        return str(found) if found else signal_name(self.exit_code)

    @property
    def requests(self) -> int:
        """Requests sent (every row), as ``summary.json`` counts them (``stats.json``'s
        ``Aggregated`` row for a run recorded before it did)."""
        return int(self.summary.get("requests", self._aggregated("requests")))

    @property
    def failures(self) -> int:
        """Failed requests, as ``summary.json`` counts them (or ``stats.json``)."""
        return int(self.summary.get("failures_total", self._aggregated("failures")))

    def _aggregated(self, column: str) -> int:
        rows = self.data.rows
        if rows.empty:
            return 0
        found = rows[rows["name"] == "Aggregated"]
        return int(found[column].iloc[0]) if not found.empty else int(rows[column].sum())

    @property
    def passed(self) -> bool | None:
        """Whether the thresholds held; None when none was given."""
        thresholds = self.summary.get("thresholds") or {}
        return bool(thresholds.get("passed")) if thresholds.get("checked") else None

    @property
    def verdict(self) -> str:
        """The report's badge in words: ``thresholds met``, ``thresholds failed: …``, …"""
        from authzkit.loadtest.read.headline import verdict

        return verdict(self.data)[1]

    @property
    def problems(self) -> list[str]:
        """Every threshold (and drift limit) the run broke; empty when none."""
        return [str(p) for p in (self.summary.get("thresholds") or {}).get("problems", [])]

    @property
    def drift(self) -> dict[str, Any] | None:
        """``summary.json``'s drift: the first and last windows' p50/p99/p99.9 and failure
        ratios, their ratio, the per-minute p99 slope and its verdict (None when not judged)."""
        found = self.summary.get("drift")
        return dict(found) if isinstance(found, Mapping) else None

    def rows(self) -> pd.DataFrame:
        """One row per request name and ``Aggregated``: counts, throughput, p50 … max read
        from the µs histograms (the terminal's table)."""
        from authzkit.loadtest.read.tables import latency_rows

        return latency_rows(self.data)

    def stats(self) -> pd.DataFrame:
        """Locust's own rows (``stats.json``): counts and whole-millisecond percentiles."""
        return self.data.rows

    def throughput(self) -> pd.DataFrame:
        """Requests per second, second by second, one column per row."""
        from authzkit.loadtest.read.tables import throughput

        return throughput(self.data)

    def timeline(self) -> pd.DataFrame:
        """p50 and p99 (ms) second by second, per row."""
        from authzkit.loadtest.read.tables import timeline

        return timeline(self.data)

    def failure_types(self) -> pd.DataFrame:
        """Failures grouped by the service's error type."""
        from authzkit.loadtest.read.tables import failures_by_type

        return failures_by_type(self.data)

    @property
    def histograms(self) -> Mapping[str, Any]:
        """Row (``"POST authorize"``, ``"Aggregated"``) → its µs HdrHistogram."""
        return self.data.histograms

    def spectrum(self, row: str = "Aggregated") -> pd.DataFrame:
        """``row``'s latency by percentile (``one_in``, ``percentile``, ``latency_us``)."""
        from authzkit.loadtest.read.spectrum import spectrum

        return spectrum(self.histograms[row])

    def plots(self, out: str | Path | None = None) -> list[Path]:
        """The report's PNGs, written into ``out`` (default: the run directory)."""
        from authzkit.loadtest.read.plots import write_plots

        return write_plots(self.data, Path(out) if out is not None else None)

    def report(self) -> Path:
        """``report.html`` (with its plots) in the run directory; its path."""
        from authzkit.loadtest.read.html import write_html

        return write_html(self.data)

    def summary_text(self) -> str:
        """What the terminal prints at the end of a run."""
        from authzkit.loadtest.read.tables import summary_text

        return summary_text(self.data)

    def compare(self, baseline: Run) -> pd.DataFrame:
        """Each row of this run against ``baseline``: before, after and the change."""
        from authzkit.loadtest.read.comparison import compare

        return compare(self.data, baseline.data)

    def regressions(self, baseline: Run, max_increase: float = 0.2) -> list[str]:
        """The rows that regressed against ``baseline``: p99 grown by more than
        ``max_increase`` (0.2 = 20 %), or a failure ratio grown (``authzkit report
        --compare --max-regression``)."""
        from authzkit.loadtest.read.comparison import regressions

        return regressions(self.compare(baseline), max_latency_increase=max_increase)

    # -- how it shows ---------------------------------------------------------------------

    def __repr__(self) -> str:
        if self.running:
            return f"Run({str(self.path)!r}, running)"
        if self.error is not None:
            return f"Run({str(self.path)!r}, error: {self.error})"
        stopped = f", interrupted by {self.interrupted}" if self.interrupted else ""
        return (
            f"Run({str(self.path)!r}, exit {self.exit_code}, {self.requests} requests, "
            f"{self.failures} failures, {self.verdict}{stopped})"
        )

    def _repr_html_(self) -> str:
        from authzkit.wire import html as h

        if self.running:
            return str(h.card("load test", h.join(h.badge("running", "info"), " ", self.path)))
        if self._html is None:
            from authzkit.loadtest.notebook.run_display import plots_html, run_html

            self._html = run_html(self, plots_html(self.data))
        return self._html


def load(path: str | Path) -> Run:
    """The :class:`Run` of a directory ``authzkit loadtest`` (or ``run``) wrote."""
    from authzkit.loadtest.read.run import load_run

    found = Run(path)
    found._data = load_run(found.path)  # a FileNotFoundError for another directory
    return found


__all__ = ["Run", "load"]
