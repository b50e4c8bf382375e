"""``authzkit check --dialect authzen``: the certification profile's tests and the interop
corpora, kept as data in ``corpora/`` (each file names its origin and version), run against a
PDP by :mod:`authzkit.check.authzen.probe` and judged by :mod:`authzkit.check.rows.authzen`
and :mod:`authzkit.check.rows.interop`.
"""

__all__: list[str] = []
