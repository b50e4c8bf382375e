"""The readable table helper's colours: a verdict column coloured, the layout unchanged."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")

from authzkit.widgets.tables import readable  # noqa: E402


def test_colours_paint_only_the_values_named() -> None:
    frame = pd.DataFrame(
        {
            "id": ["a", "b"],
            "verdict": ["pass", "odd"],
            "detail": ["a whole sentence.", "another one."],
        }
    )
    page = readable(frame, name="verdicts", colours={"verdict": {"pass": "#d1f2d9"}}).data
    assert page.count("background-color: #d1f2d9") == 1  # "odd" has no colour
    assert "#T_verdicts td.text{text-align:left" in page  # sentences still left-aligned
    assert 'id="T_verdicts_row0_col1"' in page and "a whole sentence." in page
