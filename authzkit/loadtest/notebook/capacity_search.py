"""``find_capacity(...)``: ``authzkit capacity`` from a notebook, and the :class:`Capacity`
it finds, shown as its curve.

The search is the command's, in a child process. Not named ``capacity``: an import of the
command's package would put that name back (docs/internals.md, "A capacity search").
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.notebook.background import INTERVAL_S

if TYPE_CHECKING:
    import pandas as pd

    from authzkit.loadtest.notebook.handle import Run

MARKER = "capacity.json"
SEARCH_S = 600.0  # at most, for a search whose length only its steps decide


class Capacity:
    """What ``authzkit capacity`` found: ``capacity.json`` of its run directory."""

    def __init__(self, path: str | Path, exit_code: int | None = None) -> None:
        from authzkit.loadtest.capacity.results import read_capacity

        self.path = Path(path)
        self.exit_code = exit_code
        self.document: dict[str, Any] = read_capacity(self.path)  # FileNotFoundError
        self._html: str | None = None

    @property
    def capacity_per_s(self) -> float | None:
        """The highest rate at which every step held the SLO; None when none did."""
        found = self.document.get("capacity_per_s")
        return None if found is None else float(found)

    @property
    def limited_by(self) -> str | None:
        """``service``, ``generator`` or ``max-rate``: what ended the search."""
        return self.document.get("limited_by")

    @property
    def why(self) -> str | None:
        return self.document.get("why")

    @property
    def knee_per_s(self) -> float | None:
        """The lowest rate that broke the SLO."""
        found = self.document.get("knee_per_s")
        return None if found is None else float(found)

    @property
    def complete(self) -> bool:
        return bool(self.document.get("complete"))

    @property
    def lines(self) -> list[str]:
        """The command's last lines: the capacity, the SLO, what limited it."""
        from authzkit.loadtest.capacity.results import summary_lines

        return summary_lines(self.document)

    def steps(self) -> pd.DataFrame:
        """One row per judged step: offered and achieved rates, p99, verdict, …"""
        import pandas as pd

        return pd.DataFrame.from_records(self.document.get("steps", []))

    def run(self) -> Run:
        """The search's Locust run (every step, warm-ups included) as a :class:`Run`."""
        from authzkit.loadtest.notebook.handle import load

        return load(self.path)

    def __repr__(self) -> str:
        found = self.capacity_per_s
        shown = "not found" if found is None else f"{found:,.4g}/s"
        return f"Capacity({str(self.path)!r}, {shown}, limited by {self.limited_by})"

    def _repr_html_(self) -> str:
        if self._html is None:
            self._html = capacity_html(self)
        return self._html


def capacity_html(found: Capacity) -> str:
    """The answer as a badge, what limited it and the SLO, then the curve (latency against
    offered rate) and achieved against offered rate."""
    from authzkit.loadtest.capacity.page import latency_figure, throughput_figure
    from authzkit.loadtest.notebook.run_display import png_html
    from authzkit.wire import html as h

    tone = "ok" if found.capacity_per_s is not None else "bad"
    answer, _, slo = found.lines[0].partition(" (SLO ")
    drawn = (
        (latency_figure(found.document), throughput_figure(found.document))
        if found.document.get("steps")
        else ()
    )
    plots = "".join(f"<div>{png_html(figure)}</div>" for figure in drawn)
    return str(
        h.card(
            h.join("capacity search ", h.badge(answer, tone)),
            h.key_values(
                [
                    ("limited by", found.limited_by),
                    ("why", found.why),
                    ("knee", None if found.knee_per_s is None else f"{found.knee_per_s:,.4g}/s"),
                    ("steps", len(found.document.get("steps", []))),
                    ("SLO", slo.rstrip(")") or None),
                    ("run directory", str(found.path)),
                ]
            ),
            h.Html(plots),
            tone=tone,
            wide=True,
        )
    )


def find_capacity(
    *, sandbox: bool = False, env: dict[str, str] | None = None, **options: Any
) -> Capacity:
    """Run ``authzkit capacity`` with ``options`` (its options' names with ``_``:
    ``max_p99_ms=100, start_rate=40, step_time=1``) in a child process, print its lines as
    they come, and return the :class:`Capacity` it found. ``sandbox`` and ``env`` as for
    :func:`~authzkit.loadtest.run`. A keyword or value the command would refuse raises
    :class:`~authzkit.wire.errors.ConfigError` before anything starts."""
    from authzkit.loadtest.arguments import require_extra
    from authzkit.loadtest.notebook.background import Child, child_environment, default_out
    from authzkit.loadtest.notebook.keywords import capacity_parser, command_line

    argv, args = command_line(options, capacity_parser())
    require_extra("loadtest")
    out = Path(args.out) if args.out is not None else default_out(f"capacity-{args.scenario}")
    child = Child(argv, out.absolute(), child_environment(sandbox, env), SEARCH_S, "capacity")
    try:
        while child.running:
            print(child.new_output(), end="", flush=True)
            time.sleep(INTERVAL_S / 4)
    except KeyboardInterrupt:
        child.stop()
    code = child.wait()
    print(child.new_output(), end="", flush=True)
    refused = child.refused(MARKER)
    child.close()
    if refused is not None:
        raise refused
    return Capacity(child.out, code)


def load_capacity(path: str | Path) -> Capacity:
    """The :class:`Capacity` of a directory ``authzkit capacity`` wrote."""
    return Capacity(path)


__all__ = ["Capacity", "capacity_html", "find_capacity", "load_capacity"]
