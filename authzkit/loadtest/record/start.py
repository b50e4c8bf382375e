"""Locust's own command (``python -m locust``), started a little cheaper.

Importing Locust monkey-patches with gevent, and gevent announces each patch to its plugins:
some twenty-five lookups of an entry-point group, each a scan of every installed
distribution's metadata (0.4 s of CPU in a development environment, a third of Locust's
start). The distributions cannot change while Locust imports, so the scan is made once for
that import; then Locust's ``__main__`` runs with the command line as given, as
``python -m locust`` would. Every Locust process authzkit starts, a run's, a worker's and
``--processes``', starts through this module.
"""

from __future__ import annotations

import functools
import runpy
from importlib import metadata
from typing import Any


def _import_locust_scanning_once() -> None:
    scan = metadata.entry_points
    every = functools.cache(scan)

    def entry_points(**params: Any) -> Any:
        found = every()
        return found.select(**params) if params else found

    metadata.entry_points = entry_points
    try:
        import locust  # noqa: F401  (patches with gevent: nothing may import before it)
    finally:
        metadata.entry_points = scan


def main() -> None:
    """``python -m locust``, after Locust's import."""
    _import_locust_scanning_once()
    runpy.run_module("locust", run_name="__main__", alter_sys=True)


__all__ = ["main"]

if __name__ == "__main__":
    main()
