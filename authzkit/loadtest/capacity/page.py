"""A capacity search's ``report.html``: the answer first, then every SLO with its limit and
what was measured at the capacity and at the first rate that broke (✓ or ✗), then the curve
a performance tester reads (latency against offered rate: p50, p99 and p99.9 of every step,
the SLO's limits, the knee marked), achieved against offered rate, the steps table, the
search's settings, and the Locust run's rows (every step, warm-ups included). One
self-contained page: the PNGs are embedded as data URIs, drawn with the report's shared
style (:mod:`authzkit.loadtest.read.plots.style`).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from authzkit.loadtest.capacity.results import read_capacity, summary_lines
from authzkit.loadtest.capacity.search import BROKE, HELD, LAGGED

_COLORS = {HELD: "#2ca02c", BROKE: "#d62728", LAGGED: "#ff7f0e"}
_STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1.2em;max-width:1180px;color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:1.4em 0 .4em}
.badge{display:inline-block;border-radius:1em;padding:.25em .9em;font-weight:600}
.met{background:#d9f2dd;color:#11612a}.failed{background:#fbdcdc;color:#8a1111}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.3em 0;font-size:.92em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#f4f4f4}td.text,th.text{text-align:left}
.kv td{text-align:left}img{max-width:100%;display:block;margin:.6em 0}
p.note{color:#555;margin:.3em 0}
"""
STEP_COLUMNS = (
    ("step", "index"),
    ("offered /s", "offered_per_s"),
    ("achieved /s", "achieved_per_s"),
    ("calls", "requests"),
    ("p50 ms", "p50_ms"),
    ("p99 ms", "p99_ms"),
    ("p99.9 ms", "p99.9_ms"),
    ("failure ratio", "failure_ratio"),
    ("lag p99 ms", "lag_p99_ms"),
    ("verdict", "verdict"),
    ("why", "why"),
)


def _by_rate(document: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(document.get("steps", []), key=lambda s: (s["offered_per_s"], s["index"]))


def latency_figure(document: dict[str, Any]) -> Any:
    """Latency against offered rate: every step's p50/p99/p99.9, the SLO, the knee."""
    from matplotlib.figure import Figure

    from authzkit.loadtest.read.plots.style import legend, log_latency_axis

    figure = Figure(figsize=(9, 4.5))
    axes = figure.add_subplot()
    steps = _by_rate(document)
    rates = [s["offered_per_s"] for s in steps]
    lines = (("p50_ms", "p50", ":"), ("p99_ms", "p99", "-"), ("p99.9_ms", "p99.9", "--"))
    for key, label, style in lines:
        axes.plot(rates, [max(s[key], 1e-3) for s in steps], style, marker="o", label=label)
    axes.scatter(
        rates,
        [max(s["p99_ms"], 1e-3) for s in steps],
        c=[_COLORS.get(s["verdict"], "#777") for s in steps],
        s=60,
        zorder=3,
        label="verdict (green held, red broke)",
    )
    slo = document["slo"]
    limit = slo["max_p99_ms"]
    axes.axhline(limit, color="#d62728", lw=1, label=f"SLO p99 {limit:g} ms")
    if slo.get("max_p999_ms") is not None:
        axes.axhline(
            slo["max_p999_ms"], color="#9467bd", lw=1, label=f"SLO p99.9 {slo['max_p999_ms']:g} ms"
        )
    if document.get("capacity_per_s"):
        axes.axvline(
            document["capacity_per_s"],
            color="#2ca02c",
            lw=1,
            ls="--",
            label=f"capacity {document['capacity_per_s']:,.4g}/s",
        )
    if document.get("knee_per_s"):
        axes.axvline(
            document["knee_per_s"],
            color="#d62728",
            lw=1,
            ls="--",
            label=f"knee (first broke) {document['knee_per_s']:,.4g}/s",
        )
    log_latency_axis(axes)
    axes.set_xlabel("offered rate (calls per second)")
    axes.set_title("Latency against offered rate (from each call's intended start)")
    axes.grid(True, alpha=0.3)
    legend(axes)
    return figure


def throughput_figure(document: dict[str, Any]) -> Any:
    """Achieved against offered rate: on the diagonal while the service keeps up."""
    from matplotlib.figure import Figure

    from authzkit.loadtest.read.plots.style import legend

    figure = Figure(figsize=(9, 4))
    axes = figure.add_subplot()
    steps = _by_rate(document)
    rates = [s["offered_per_s"] for s in steps]
    top = max(rates, default=1.0)
    axes.plot([0, top], [0, top], color="#999", lw=1, ls=":", label="achieved = offered")
    axes.plot(rates, [s["achieved_per_s"] for s in steps], marker="o", label="achieved")
    axes.set_xlabel("offered rate (calls per second)")
    axes.set_ylabel("achieved (answered per second)")
    axes.set_title("Achieved against offered rate")
    axes.grid(True, alpha=0.3)
    legend(axes)
    return figure


def write_capacity_plots(document: dict[str, Any], out: Path) -> list[Path]:
    """``capacity_latency.png`` and ``capacity_throughput.png`` in ``out`` (none without steps)."""
    from authzkit.loadtest.read.plots.style import save

    if not document.get("steps"):
        return []
    return [
        save(latency_figure(document), out / "capacity_latency.png"),
        save(throughput_figure(document), out / "capacity_throughput.png"),
    ]


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def steps_table(document: dict[str, Any]) -> str:
    """Every judged step, in the order it ran."""
    head = "".join(f"<th>{html.escape(title)}</th>" for title, _ in STEP_COLUMNS)
    rows = []
    for step in document.get("steps", []):
        cells = []
        for _, key in STEP_COLUMNS:
            value = step.get(key)
            value = value + 1 if key == "index" else value
            css = ' class="text"' if key in ("verdict", "why") else ""
            shown = f"{value:,.4g}" if isinstance(value, float) else str(value)
            cells.append(f"<td{css}>{html.escape(shown)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def _run_rows(directory: Path) -> list[str]:
    """The Locust run's rows, when it left its numbers (an interrupted start may not)."""
    from authzkit.loadtest.read.run import load_run
    from authzkit.loadtest.read.sections import rows_table

    try:
        run = load_run(directory)
    except FileNotFoundError:
        return []
    if run.rows.empty:
        return []
    return ["<h2>The Locust run (every step, warm-ups included)</h2>", rows_table(run)]


def write_capacity_html(directory: Path) -> Path:
    """``report.html`` of the capacity run in ``directory``."""
    from authzkit.loadtest.read.sections import key_values
    from authzkit.loadtest.read.thresholds import capacity_section

    document = read_capacity(directory)
    found = document.get("capacity_per_s") is not None and document.get("complete")
    badge = "met" if found else "failed"
    lines = summary_lines(document)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>authzkit capacity</title><style>{_STYLE}</style></head><body>",
        "<h1>How much can it take?</h1>",
        f'<p><span class="badge {badge}">{html.escape(lines[0])}</span></p>',
        *(f"<p>{html.escape(line)}</p>" for line in lines[1:]),
    ]
    if document.get("interrupted"):
        parts.append(
            f'<p class="note">Interrupted by {html.escape(str(document["interrupted"]))}: '
            "the steps judged until then.</p>"
        )
    parts += capacity_section(document)
    parts += [_image(path) for path in write_capacity_plots(document, Path(directory))]
    parts += ["<h2>Steps</h2>", steps_table(document)]
    parts += ["<h2>SLO and search</h2>", key_values({**document["slo"], **document["search"]})]
    if document.get("generator"):
        parts += ["<h2>Generator</h2>", key_values(document["generator"])]
    parts += _run_rows(Path(directory))
    parts.append("</body></html>")
    path = Path(directory) / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


__all__ = [
    "STEP_COLUMNS",
    "latency_figure",
    "steps_table",
    "throughput_figure",
    "write_capacity_html",
    "write_capacity_plots",
]
