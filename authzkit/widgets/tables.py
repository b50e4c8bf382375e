"""Tables as a person reads them: in JupyterLab and in a notebook's HTML export.

:func:`readable` renders a DataFrame without its index, text wrapped, numbers aligned and no
wider than the page, with a stable element id so nbval can compare a re-run
(docs/internals.md, "Tables").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TEXT_WIDTH_EM = 26  # a sentence column wraps at about 60 characters
MIN_TEXT_EM = 7  # and never narrower than a short phrase


def _style(name: str) -> str:
    table = f"#T_{name}"
    return (
        f"<style>{table}{{border-collapse:collapse;width:100%;max-width:100%;"
        "table-layout:auto;font-size:.92em}"
        f"{table} th,{table} td{{padding:4px 8px;border-bottom:1px solid #ddd;"
        "vertical-align:top}"
        f"{table} th{{text-align:left;background:#f4f4f4}}"
        f"{table} td.text{{text-align:left;white-space:normal;overflow-wrap:anywhere;"
        f"min-width:{MIN_TEXT_EM}em;max-width:{TEXT_WIDTH_EM}em}}"
        f"{table} td.number{{text-align:right;white-space:nowrap}}</style>"
    )


def readable(
    frame: Any,
    *,
    name: str,
    index: bool | None = None,
    colours: Mapping[str, Mapping[Any, str]] | None = None,
) -> Any:
    """``frame`` as an :class:`IPython.display.HTML` table (see the module docstring).

    ``index``: keep the index as a first column (default: only when it is named, i.e. it
    carries information such as an error type); ``name`` must be unique in the notebook.
    ``colours``: column → {value: background colour}, so a verdict or an outcome reads at
    a glance while its table keeps the same layout as every other.
    """
    import pandas as pd
    from IPython.display import HTML

    keep = frame.index.name is not None if index is None else index
    shown = frame.reset_index() if keep else frame.reset_index(drop=True)
    numeric = {
        column
        for column in shown.columns
        if pd.api.types.is_numeric_dtype(shown[column])
        and not pd.api.types.is_bool_dtype(shown[column])
    }
    styler = (
        shown.style.hide(axis="index")
        .set_uuid(name)
        .format(na_rep="", precision=2)
        .set_td_classes(
            pd.DataFrame(
                [["number" if column in numeric else "text" for column in shown.columns]]
                * len(shown),
                index=shown.index,
                columns=shown.columns,
            )
        )
    )
    for column, palette in (colours or {}).items():
        styler = styler.map(
            lambda value, palette=palette: _background(palette, value), subset=[column]
        )
    return HTML(_style(name) + styler.to_html())  # type: ignore[no-untyped-call]


def _background(palette: Mapping[Any, str], value: Any) -> str:
    colour = palette.get(value)
    return f"background-color: {colour}" if colour else ""


__all__ = ["readable"]
