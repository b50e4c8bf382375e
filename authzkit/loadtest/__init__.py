"""The load-test side: Locust users on the core client, the ``loadtest`` and ``capacity``
commands, reports, and :func:`run`, :func:`load`, :func:`find_capacity` for notebooks.

Driving a run here, :mod:`~authzkit.loadtest.record` inside Locust,
:mod:`~authzkit.loadtest.read` after it. Importing it imports nothing of Locust
(docs/internals.md, "Running a load test").
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module (of authzkit.loadtest.notebook) that defines it
_EXPORTS: dict[str, str] = {
    "Capacity": "capacity_search",
    "Run": "handle",
    "find_capacity": "capacity_search",
    "load": "handle",
    "load_capacity": "capacity_search",
    "run": "start",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.notebook.{module}"), name)
    globals()[name] = value
    return value
