"""Reading a finished run: pandas tables, percentile spectra, PNGs and ``report.html``.

``tables`` loads a run directory into tables, ``spectrum`` the latency distributions,
``plots`` draws the PNGs, ``html`` writes the page a person reads, ``notices`` what it must
say before any number, and ``units`` how every duration is written.
"""

__all__: list[str] = []
