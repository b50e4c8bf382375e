"""The load-test side: Locust users on the core client, the ``loadtest`` command, reports.

Importing this package imports nothing of Locust: only :mod:`authzkit.loadtest.users`
does (its gevent monkey-patching must never reach a notebook kernel or a test run), and
only locustfiles import that module. The rest is locust-free and tested in-process:

- :mod:`~authzkit.loadtest.tasks` — what one user does per task;
- :mod:`~authzkit.loadtest.context` — what one process shares (settings, subjects, wait);
- :mod:`~authzkit.loadtest.verdict` — the end-of-run summary and thresholds;
- :mod:`~authzkit.loadtest.runner` — the ``locust`` command line, run time, live totals;
- :mod:`~authzkit.loadtest.command` — ``authzkit loadtest`` and ``authzkit report``;
- :mod:`~authzkit.loadtest.report`, :mod:`~authzkit.loadtest.plots`,
  :mod:`~authzkit.loadtest.html` — pandas tables, PNGs, ``report.html``.
"""

__all__: list[str] = []
