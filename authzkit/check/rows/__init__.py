"""The checker's rows, one module per SPEC section: each exports ``ROWS``, a tuple of
:class:`~authzkit.check.results.RowSpec` (stable id, title, SPEC section, check, request count)."""

__all__: list[str] = []
