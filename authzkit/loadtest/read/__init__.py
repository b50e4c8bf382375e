"""Reading a finished run: pandas tables, percentile spectra, PNGs and ``report.html``.

The face of the report functions a notebook or a script uses: :func:`load_run` reads a run
directory into a :class:`Run`; the table functions (``summary_text``, ``format_rows``,
``throughput``, ``timeline``, ``failures_by_type``), the comparison of two runs
(``compare``, ``regressions``, ``format_comparison``), the latency spectra (``spectrum``,
``spectra``, ``NINES``), the PNGs (``write_plots``, ``shown_plots``) and the page
(``write_html``). Names resolve on first use, so importing this package imports neither
pandas nor matplotlib.

Inside: ``run`` loads a run directory, ``tables`` turns it into one table per figure,
``comparison`` judges one run against another, ``spectrum`` the latency distributions,
``plots`` draws the PNGs, ``html`` writes the page a person reads (``headline`` its verdict,
notices and figures, ``thresholds`` every limit given with its figure and ✓/✗, ``sections``
its tables, ``figures`` the data sent and received, the checks and the request phases,
``parameters`` its readable run parameters, ``notices`` what it must say before any
number), and ``units`` how every duration and size is written.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module (of this package) that defines it
_EXPORTS: dict[str, str] = {
    "NINES": "spectrum",
    "Run": "run",
    "compare": "comparison",
    "failures_by_type": "tables",
    "format_comparison": "comparison",
    "format_rows": "tables",
    "load_run": "run",
    "log_latency_axis": "plots",
    "regressions": "comparison",
    "shown_plots": "plots",
    "spectra": "spectrum",
    "spectrum": "spectrum",
    "summary_text": "tables",
    "throughput": "tables",
    "timeline": "tables",
    "write_html": "html",
    "write_plots": "plots",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
