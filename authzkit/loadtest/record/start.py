"""Locust's own command (``python -m locust``), started a little cheaper.

Every Locust process authzkit starts goes through here: gevent's plugin lookups scan the
installed distributions once for Locust's import, not some twenty-five times
(docs/internals.md, "Starting Locust").
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
