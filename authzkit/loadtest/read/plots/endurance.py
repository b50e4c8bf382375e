"""The report's plots of an endurance run: the drift (p99 per window, the two windows judged
and the fitted slope), the resources of every process the run started, and the faults the
sandbox injected, marked where they happened on the plots second by second.

All from ``summary.json`` (``drift``, ``resources``, ``fault_marks``) and ``timeline.json``'s
first second (the origin the marks are placed against): nothing is recomputed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from authzkit.loadtest.read.plots.style import PALETTE, empty, legend, save
from authzkit.loadtest.read.run import RunResults
from authzkit.loadtest.read.units import duration
from authzkit.loadtest.record.timeline import TIMELINE_FILE

MIB = 1024 * 1024
MARK_COLORS = {"key rotation": "#7b3294", "pause": "#d7191c", "token outage": "#e66101"}


def fault_marks(run: RunResults, origin: float | None = None) -> list[tuple[float, str]]:
    """``(elapsed second, fault)`` for each mark of the run: its epoch time against
    ``origin`` (epoch), by default the timeline's first second."""
    marks = run.summary.get("fault_marks") or []
    if origin is None:
        try:
            path = run.directory / TIMELINE_FILE
            origin = json.loads(path.read_text(encoding="utf-8"))["start"]
        except (OSError, ValueError, KeyError, TypeError):
            return []
    if origin is None:
        return []
    return [(float(m["at"]) - float(origin), str(m["fault"])) for m in marks]


def draw_fault_marks(axes: Axes, run: RunResults, origin: float | None = None) -> None:
    """A dotted vertical line at each fault, labelled once per kind of fault (``origin``:
    the epoch second the plot's x axis starts at, by default the timeline's)."""
    labelled: set[str] = set()
    for at, fault in fault_marks(run, origin):
        axes.axvline(
            at,
            linestyle=":",
            linewidth=1.2,
            color=MARK_COLORS.get(fault, "#555555"),
            label=None if fault in labelled else fault,
        )
        labelled.add(fault)


def drift(run: RunResults, path: Path) -> Path | None:
    """:func:`drift_figure` saved to ``path``; None when the run's drift was not judged."""
    section = run.summary.get("drift") or {}
    if not section.get("judged"):
        return None
    return save(drift_figure(section, run), path)


FIRST_WINDOW = "#4575b4"  # the reference window: neither good nor bad
LAST_WINDOW = {"failed": "#d7191c", "met": "#1a9641", "unjudged": "#7f7f7f"}


def last_window_color(section: dict[str, Any]) -> str:
    """The last window's shade: red only when a drift limit was given and broken, green
    when given and held, grey for a run whose drift no limit judged (it failed nothing)."""
    if not section.get("checked"):
        return LAST_WINDOW["unjudged"]
    return LAST_WINDOW["met" if section.get("passed") else "failed"]


def drift_figure(section: dict[str, Any], run: RunResults | None = None) -> Figure:
    """p99 of each window (a step per window), the first and the last window shaded, the
    line fitted through the windows' p99, and the faults marked."""
    figure = Figure(figsize=(11, 4))
    axes = figure.subplots()
    windows = [w for w in section.get("windows", []) if w.get("p99")]
    if not windows:
        empty(axes, "no window measured anything")
        return figure
    xs = [w["from_s"] for w in windows] + [windows[-1]["to_s"]]
    ys = [w["p99"] / 1000 for w in windows]
    axes.stairs(ys, xs, label=f"p99 per {section['window_s']} s window", color=PALETTE[0])
    for key, color in (("first", FIRST_WINDOW), ("last", last_window_color(section))):
        window = section[key]
        p99 = "-" if window["p99"] is None else duration(window["p99"])
        axes.axvspan(
            window["from_s"],
            window["to_s"],
            alpha=0.15,
            color=color,
            label=f"{key} window: p99 {p99}",
        )
    slope = section.get("slope")
    if slope:
        ends = [section["warm_up_s"], section["seconds"]]
        fitted = [(slope["intercept_us"] + slope["p99_us_per_min"] * s / 60) / 1000 for s in ends]
        axes.plot(
            ends,
            fitted,
            "k--",
            linewidth=1,
            label=f"fit {duration(abs(slope['p99_us_per_min']))}/min "
            f"{'up' if slope['p99_us_per_min'] >= 0 else 'down'} (r² {slope['r2']:.2f})",
        )
    if run is not None:
        draw_fault_marks(axes, run)
    ratio = section.get("ratio")
    verdict = "" if not section.get("checked") else (" — met" if section["passed"] else " — failed")
    shown = "-" if ratio is None else f"{ratio:.2f}x"
    axes.set(
        title=f"Drift: last / first window p99 {shown}{verdict}",
        xlabel="elapsed s",
        ylabel="ms",
        ylim=(0, None),
    )
    legend(axes)
    return figure


def resources(run: RunResults, path: Path) -> Path | None:
    """:func:`resources_figure` saved to ``path``; None when nothing was sampled."""
    processes = (run.summary.get("resources") or {}).get("processes") or []
    if not any(p.get("seconds") for p in processes):
        return None
    return save(resources_figure(processes, run.summary["resources"].get("generator")), path)


def resources_figure(
    processes: list[dict[str, Any]], generator: dict[str, Any] | None = None
) -> Figure:
    """Memory (RSS, MiB) and CPU (% of one core) of each process, second by second."""
    figure = Figure(figsize=(11, 4))
    memory, cpu = figure.subplots(1, 2)
    for i, process in enumerate(processes):
        label = f"{process['role']} (pid {process['pid']})"
        color = PALETTE[i % len(PALETTE)]
        memory.plot(
            process["seconds"],
            [v / MIB for v in process["rss_bytes"]],
            label=label,
            color=color,
        )
        cpu.plot(process["seconds"], process["cpu_percent"], label=label, color=color)
    growing = (generator or {}).get("growing") or []
    title = "RSS (MiB)" + (f": {', '.join(growing)} growing steadily" if growing else "")
    memory.set(title=title, xlabel="s since the run started", ylabel="MiB", ylim=(0, None))
    cpu.set(title="CPU (% of one core)", xlabel="s since the run started", ylabel="%")
    cpu.set_ylim(0, None)
    legend(cpu)
    return figure


__all__ = [
    "FIRST_WINDOW",
    "LAST_WINDOW",
    "MARK_COLORS",
    "draw_fault_marks",
    "drift",
    "drift_figure",
    "fault_marks",
    "last_window_color",
    "resources",
    "resources_figure",
]
