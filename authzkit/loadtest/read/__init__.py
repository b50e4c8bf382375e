"""Reading a finished run: pandas tables, percentile spectra, PNGs and ``report.html``.

The face of the report functions a notebook or a script uses (:func:`load_run` first).
Names resolve on first use, so importing this package imports neither pandas nor
matplotlib (docs/internals.md, "Reading a run").
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module (of this package) that defines it
_EXPORTS: dict[str, str] = {
    "NINES": "spectrum",
    "RunResults": "run",
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

# deprecated name -> the public name that replaces it (warned once, then kept)
_DEPRECATED: dict[str, str] = {"Run": "RunResults"}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        from authzkit.wire.deprecation import deprecated

        deprecated(f"{__name__}.{name}", f"{__name__}.{_DEPRECATED[name]}")
        value = __getattr__(_DEPRECATED[name])
        globals()[name] = value
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
