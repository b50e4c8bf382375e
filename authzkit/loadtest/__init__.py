"""The load-test side: Locust users on the core client, the ``loadtest`` command, reports.

Three parts, by when they run:

- here, driving a run: ``arguments`` and ``plan`` (what was asked, checked before anything
  starts), ``preflight`` (one authorize per subject), ``launch`` and ``child`` (locust as a
  child process, its progress), ``interrupt`` (Ctrl-C, SIGTERM), ``roles`` (a distributed
  run's master and workers), ``command`` (the commands), ``reporting`` (what ends a run and
  ``authzkit report`` print and write: the summary, ``report.html``, the exit code);
- :mod:`~authzkit.loadtest.record` — inside the Locust process, during the run: the users
  and what they record (histograms, timeline, schedule, the summary files);
- :mod:`~authzkit.loadtest.read` — after the run: tables, spectra, PNGs, ``report.html``.

Importing this package imports nothing of Locust: only :mod:`authzkit.loadtest.record.users`
(and the process set-up and listeners it imports) does, since its gevent monkey-patching must
never reach a notebook kernel or a test run; only locustfiles import that module.
"""

__all__: list[str] = []
