"""The load-test side: Locust users on the core client, the ``loadtest`` command, reports.

From a notebook or a script: :func:`run` runs ``authzkit loadtest`` (its options as
keywords, checked by their one definition) in a child process with a live view and returns a
:class:`Run`; :func:`load` reads the :class:`Run` of an earlier run directory;
:func:`find_capacity` runs ``authzkit capacity`` and returns the :class:`Capacity` it found
(:func:`load_capacity` reads one), shown as its curve. A ``Run`` offers
the report's tables, histograms, verdict, plots and comparisons, and shows its headline in a
notebook (:mod:`~authzkit.loadtest.notebook`).

Four parts, by when they run:

- here, driving a run: ``arguments`` and ``plan`` (what was asked: one frozen plan,
  checked before anything starts), ``preflight`` (one authorize per subject), ``driver``
  (Locust as a child process: start, run, stop, for ``loadtest`` and ``capacity``),
  ``child`` (its command line), ``progress`` (its progress lines), ``interrupt`` (Ctrl-C,
  SIGTERM), ``roles`` (a distributed run's master and workers), ``run_directory`` (the
  directory and its run.json), ``command`` (the commands), ``reporting`` (what ends a run and
  ``authzkit report`` print and write: the summary, ``report.html``, the exit code);
- :mod:`~authzkit.loadtest.record` — inside the Locust process, during the run: the users
  and what they record (histograms, timeline, schedule, the summary files);
- :mod:`~authzkit.loadtest.read` — after the run: tables, spectra, PNGs, ``report.html``;
- :mod:`~authzkit.loadtest.notebook` — ``run``, ``load`` and ``Run``, in the caller's
  process (a kernel): the command in a child, its live view, the run read back.

Importing this package imports nothing of Locust: only :mod:`authzkit.loadtest.record.users`
(and the process set-up and listeners it imports) does, since its gevent monkey-patching must
never reach a notebook kernel or a test run; only locustfiles import that module.
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
