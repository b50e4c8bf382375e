"""Reading a finished run: pandas tables, percentile spectra, PNGs and ``report.html``.

``run`` loads a run directory, ``tables`` turns it into one table per figure,
``comparison`` judges one run against another, ``spectrum`` the latency distributions,
``plots`` draws the PNGs, ``html`` writes the page a person reads (``headline`` its verdict,
notices and figures, ``sections`` its tables, ``parameters`` its readable run parameters,
``notices`` what it must say before any number), and ``units`` how every duration is
written.
"""

__all__: list[str] = []
