"""The report's PNGs, drawn with matplotlib's Agg canvas.

Using ``Figure`` + ``FigureCanvasAgg`` directly (no pyplot, no global backend) leaves a
notebook's inline backend alone and works on machines without a display.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from authzkit.loadtest.report import AGGREGATED, TOKEN_ROW, Run

PLOTS = ("latency_percentiles.png", "requests_per_second.png", "token_calls.png")
_HISTORY_PERCENTILES = {"50%": "p50", "90%": "p90", "95%": "p95", "99%": "p99"}


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return path


def _empty(axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    axes.set_xticks([])
    axes.set_yticks([])


def latency(run: Run, path: Path) -> Path:
    """Aggregated p50/p90/p95/p99 over time (left) and each row's p95 (right)."""
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    history = run.history
    if history.empty or "Timestamp" not in history:
        _empty(left, "no stats history (run without --csv-full-history)")
        _empty(right, "")
        return _save(figure, path)
    if "Total Request Count" in history:  # the first samples precede any request
        history = history[history["Total Request Count"] > 0]
    history = history.assign(elapsed_s=history["Timestamp"] - history["Timestamp"].min())
    total = history[history["Name"] == AGGREGATED]
    for column, label in _HISTORY_PERCENTILES.items():
        if column in total:
            left.plot(total["elapsed_s"], total[column], label=label)
    left.set(title="Aggregated latency percentiles (10 s window)", xlabel="elapsed s",
             ylabel="ms")
    left.legend(loc="upper left")
    for (kind, name), rows in history[history["Name"] != AGGREGATED].groupby(["Type", "Name"]):
        right.plot(rows["elapsed_s"], rows["95%"], label=f"{kind} {name}")
    right.set(title="p95 per row (10 s window)", xlabel="elapsed s", ylabel="ms")
    if right.lines:
        right.legend(loc="upper left", fontsize="small")
    return _save(figure, path)


def requests_per_second(run: Run, path: Path) -> Path:
    """Requests per second of every row, and failures per second, second by second."""
    figure = Figure(figsize=(11, 4))
    axes = figure.subplots()
    per_second = run.per_second
    if per_second.empty:
        _empty(axes, "no requests")
        return _save(figure, path)
    for (kind, name), rows in per_second.groupby(["type", "name"]):
        axes.plot(rows["elapsed_s"], rows["requests"], label=f"{kind} {name}")
    failures = per_second.groupby("elapsed_s")["failures"].sum()
    if failures.any():
        axes.plot(failures.index, failures.values, "k--", label="failures (all rows)")
    axes.set(title="Requests per second", xlabel="elapsed s", ylabel="requests/s")
    axes.legend(loc="upper left", fontsize="small")
    return _save(figure, path)


def token_calls(run: Run, path: Path) -> Path:
    """Cumulative token calls over the run (one line per token-related row)."""
    figure = Figure(figsize=(11, 3.5))
    axes = figure.subplots()
    per_second = run.per_second
    rows = per_second[per_second["name"].str.startswith(TOKEN_ROW)] if not per_second.empty \
        else per_second
    if rows.empty:
        _empty(axes, "no token calls recorded")
        return _save(figure, path)
    for (kind, name), group in rows.groupby(["type", "name"]):
        cumulative = group.groupby("elapsed_s")["requests"].sum().cumsum()
        axes.step(cumulative.index, cumulative.values, where="post", label=f"{kind} {name}")
    axes.set(title=f"Token calls (total {run.token_calls})", xlabel="elapsed s",
             ylabel="cumulative calls")
    axes.legend(loc="upper left", fontsize="small")
    return _save(figure, path)


def write_plots(run: Run, out: Path | None = None) -> list[Path]:
    """The three PNGs (latency percentiles, requests/s, token calls) in ``out`` (default:
    the run directory); returns their paths."""
    out = Path(out) if out is not None else run.directory
    out.mkdir(parents=True, exist_ok=True)
    return [latency(run, out / PLOTS[0]), requests_per_second(run, out / PLOTS[1]),
            token_calls(run, out / PLOTS[2])]


__all__ = ["PLOTS", "latency", "requests_per_second", "token_calls", "write_plots"]
