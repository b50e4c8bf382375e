"""The resources of every process ``authzkit loadtest`` started, second by second, and the
faults its sandbox injected, as they happened.

:class:`Watch` samples from the command's process (never inside Locust);
:func:`steady_growth` judges a generator's memory (docs/internals.md, "Resources and fault
marks").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from authzkit.loadtest.record.face import line_fit

SERIES = ("rss_bytes", "cpu_percent", "fds", "threads")
GROWTH_FIT = 0.8
GROWTH_SHARE = 0.10
GROWTH_MIN_BYTES = 16 * 1024 * 1024
GROWTH_MIN_SAMPLES = 20
GROWTH_SKIP_SAMPLES = 20
# The sandbox's fault counters a mark is drawn for (the error rate's 503s are everywhere).
MARKED = {"key_rotations": "key rotation", "pauses": "pause", "token_outage": "token outage"}
GENERATOR_ROLES = ("locust", "master", "worker")


def steady_growth(seconds: Sequence[float], rss: Sequence[int]) -> dict[str, Any]:
    """The memory verdict of one process: ``rss_growth_bytes_per_min`` (the fitted slope),
    ``r2``, ``grew_bytes`` over the fitted span, ``judged`` and ``steady`` (see the module).
    The first tenth of the samples, and at least :data:`GROWTH_SKIP_SAMPLES`, are left out
    (a process importing and warming up grows), and at least
    :data:`GROWTH_MIN_SAMPLES` must remain: a short run is not judged."""
    skip = max(len(seconds) // 10, GROWTH_SKIP_SAMPLES)
    xs = [s / 60.0 for s in seconds[skip:]]
    ys = [float(v) for v in rss[skip:]]
    slope, intercept, r2 = line_fit(xs, ys)
    grew = slope * (xs[-1] - xs[0]) if len(xs) >= 2 else 0.0
    start = intercept + slope * xs[0] if xs else 0.0
    judged = len(xs) >= GROWTH_MIN_SAMPLES
    steady = judged and r2 >= GROWTH_FIT and grew >= max(GROWTH_SHARE * start, GROWTH_MIN_BYTES)
    return {
        "rss_growth_bytes_per_min": round(slope),
        "r2": round(r2, 3),
        "grew_bytes": round(grew),
        "judged": judged,
        "steady": bool(steady),
    }


def generator_verdict(processes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``resources.generator``: every Locust process's :func:`steady_growth`, and
    ``steady_growth`` (the warning's number: true when one of them grows steadily) with
    the roles that do."""
    judged = {
        p["role"]: steady_growth(p["seconds"], p["rss_bytes"])
        for p in processes
        if p["role"].split()[0] in GENERATOR_ROLES and p["seconds"]
    }
    growing = [role for role, verdict in judged.items() if verdict["steady"]]
    return {"steady_growth": bool(growing), "growing": growing, "processes": judged}


def fault_marks(before: dict[str, Any], after: dict[str, Any], at: float) -> list[dict[str, Any]]:
    """The marks for one second: each :data:`MARKED` counter of the sandbox's ``faults``
    that rose between two snapshots of its stats, at ``at`` (epoch seconds)."""
    old, new = before.get("faults") or {}, after.get("faults") or {}
    return [
        {"at": round(at, 3), "fault": name, "count": int(new[key]) - int(old.get(key, 0))}
        for key, name in MARKED.items()
        if int(new.get(key, 0) or 0) > int(old.get(key, 0) or 0)
    ]


class Watch:
    """Once a second (:meth:`tick`): the processes' resources and the sandbox's fault marks.

    ``locust`` and ``sandbox`` are the pids authzkit started (either may be None);
    ``stats`` returns the sandbox's counters (None: no marks). Without ``psutil`` nothing
    is sampled (``available`` false; the summary says so)."""

    def __init__(
        self,
        locust: int | None = None,
        sandbox: int | None = None,
        *,
        master: bool = False,
        stats: Callable[[], dict[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        try:
            import psutil
        except ImportError:
            psutil = None
        self._psutil = psutil
        self._clock = clock
        self._stats = stats
        self._last_stats: dict[str, Any] | None = None
        self.started = clock()
        self.marks: list[dict[str, Any]] = []
        self._processes: dict[int, dict[str, Any]] = {}
        self._handles: dict[int, Any] = {}
        self._locust: int | None = None
        self._master = master
        if sandbox is not None:
            self._track(sandbox, "sandbox")
        if locust is not None:
            self.locust_started(locust)

    @property
    def available(self) -> bool:
        return self._psutil is not None

    def locust_started(self, pid: int) -> None:
        """Follow the Locust process (and, from then on, its workers)."""
        self._locust = pid
        self._track(pid, "master" if self._master else "locust")

    def _track(self, pid: int, role: str) -> None:
        if self._psutil is None or pid in self._handles:
            return
        try:
            self._handles[pid] = self._psutil.Process(pid)
        except self._psutil.Error:
            return
        self._processes[pid] = {"role": role, "pid": pid, "seconds": [], "cpu_s": None, "at": 0.0}
        for name in SERIES:
            self._processes[pid][name] = []

    def _follow_workers(self) -> None:
        """``--processes`` forks the workers from the Locust process: its children."""
        handle = self._handles.get(self._locust) if self._locust is not None else None
        if handle is None:
            return
        try:
            children = handle.children()
        except self._psutil.Error:
            return
        for child in children:
            if child.pid not in self._handles:
                workers = sum(p["role"].startswith("worker") for p in self._processes.values())
                self._track(child.pid, f"worker {workers + 1}")
                if self._locust is not None and not self._master:
                    self._processes[self._locust]["role"] = "master"

    def tick(self) -> None:
        """One sample of every process, and the fault marks since the last tick."""
        now = self._clock()
        if self._psutil is not None:
            self._follow_workers()
            for pid, handle in list(self._handles.items()):
                self._sample(self._processes[pid], handle, now)
        self._mark(now)

    def _sample(self, series: dict[str, Any], handle: Any, now: float) -> None:
        try:
            with handle.oneshot():
                times = handle.cpu_times()
                cpu_s = float(times.user + times.system)
                rss = int(handle.memory_info().rss)
                fds = int(handle.num_fds())
                threads = int(handle.num_threads())
        except self._psutil.Error:  # it ended: its series stops
            return
        last, elapsed = series["cpu_s"], now - series["at"]
        cpu = 0.0 if last is None or elapsed <= 0 else (cpu_s - last) / elapsed * 100
        series["cpu_s"], series["at"] = cpu_s, now
        series["seconds"].append(round(now - self.started, 1))
        series["rss_bytes"].append(rss)
        series["cpu_percent"].append(round(cpu, 1))
        series["fds"].append(fds)
        series["threads"].append(threads)

    def _mark(self, now: float) -> None:
        if self._stats is None:
            return
        try:
            found = self._stats()
        except Exception:  # a mark is worth no failed run
            return
        if self._last_stats is not None:
            self.marks += fault_marks(self._last_stats, found, now)
        self._last_stats = found

    def section(self) -> dict[str, Any]:
        """``summary.json``'s ``resources``: ``started_at`` (epoch), ``interval_s``,
        ``processes`` (role, pid, ``seconds`` since ``started_at`` and a series per
        :data:`SERIES`) and the ``generator``'s memory verdict."""
        processes = [
            {k: v for k, v in p.items() if k not in ("cpu_s", "at")}
            for p in self._processes.values()
        ]
        return {
            "sampled": self.available,
            "started_at": round(self.started, 3),
            "interval_s": 1.0,
            "processes": processes,
            "generator": generator_verdict(processes),
        }


def write_resources(out: Path, watch: Watch) -> None:
    """Add ``resources`` and ``fault_marks`` to the run's ``summary.json`` (written by
    Locust at its exit, an interrupted run's too); nothing when Locust left none."""
    path = out / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    summary["resources"] = watch.section()
    summary["fault_marks"] = watch.marks
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


__all__ = [
    "GROWTH_FIT",
    "GROWTH_MIN_BYTES",
    "GROWTH_SHARE",
    "MARKED",
    "SERIES",
    "Watch",
    "fault_marks",
    "generator_verdict",
    "steady_growth",
    "write_resources",
]
