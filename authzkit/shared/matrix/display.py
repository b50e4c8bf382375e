"""How a :class:`~authzkit.shared.matrix.table.PolicyMatrix` shows in a notebook: one row per
action, one column per resource, each cell's outcome tinted by its kind (authorized green,
challenge amber, unauthorized red, anything else grey), then the resources spelled out and
the counts.

The matrix imports this module when it is first shown, so it is taken as ``Any`` here.
"""

from __future__ import annotations

from typing import Any

from authzkit.wire.html import Html, badge, card, code, join, key_values, table

KIND_TONES = {"authorized": "ok", "challenge": "warn", "unauthorized": "bad", "other": "neutral"}


def matrix_html(matrix: Any) -> Html:
    """The matrix's card: the table of outcomes, its resources, its counts."""
    tone_of = {cell.outcome: KIND_TONES.get(cell.kind, "neutral") for cell in matrix.cells}
    rows = [
        (code(action), *(badge(outcome, tone_of.get(outcome, "neutral")) for outcome in outcomes))
        for action, *outcomes in matrix.rows()
    ]
    resources = table(
        ("resource", "id", "type", "owner"),
        [(r.label, code(r.id), code(r.type), r.owner or "") for r in matrix.resources],
    )
    counts = join(
        *(
            join(badge(kind, KIND_TONES.get(kind, "neutral")), f" {n}  ")
            for kind, n in matrix.counts().items()
            if n
        )
    )
    title = join(badge("policy matrix", "info"), " subject ", code(matrix.subject))
    facts = key_values([("cells", f"{len(matrix.cells)}"), ("outcomes", counts)])
    return card(
        title,
        table(("action", *(r.label for r in matrix.resources)), rows),
        resources,
        facts,
    )


__all__ = ["KIND_TONES", "matrix_html"]
