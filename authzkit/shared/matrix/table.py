"""The answered policy matrix: one cell per action x resource, and how it reads (an aligned
text table, a pandas DataFrame, a colour per kind of outcome). What is asked, and how, is
:mod:`authzkit.shared.matrix.plan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.wire.errors import AuthzError
from authzkit.wire.spec import DEFAULT_RESOURCE_TYPE

UNAUTHORIZED = "srn:error:unauthorized"
# Background colour of a cell by its kind (the notebook's styled table, the explorer).
KIND_COLOURS = {
    "authorized": "#d1f2d9",
    "challenge": "#fff1c2",
    "unauthorized": "#ffd7d5",
    "other": "#e1e4e8",
}


@dataclass(frozen=True)
class MatrixResource:
    """A resource of the matrix: its id, type and a short column label."""

    id: str
    type: str = DEFAULT_RESOURCE_TYPE
    label: str = ""
    owner: str | None = None


@dataclass(frozen=True)
class MatrixCell:
    """What one plain authorize request answered for ``action`` on ``resource``.

    ``outcome`` is the text a person reads (``authorized``, ``challenge: pin``,
    ``unauthorized``, ``srn:error:…``); ``kind`` groups it for colouring and counting.
    """

    action: str
    resource: MatrixResource
    outcome: str
    kind: str
    status: int | None = None
    type: str | None = None


@dataclass(frozen=True)
class PolicyMatrix:
    """The answered matrix: ``cells`` in action-major order, one per action x resource."""

    subject: str
    actions: tuple[str, ...]
    resources: tuple[MatrixResource, ...]
    cells: tuple[MatrixCell, ...]

    def cell(self, action: str, resource_id: str) -> MatrixCell:
        """The cell of ``action`` on the resource ``resource_id``."""
        for cell in self.cells:
            if cell.action == action and cell.resource.id == resource_id:
                return cell
        raise KeyError(f"no cell for action {action!r} on resource {resource_id!r}")

    def counts(self) -> dict[str, int]:
        """How many cells of each kind (authorized, challenge, unauthorized, other)."""
        counts = dict.fromkeys(KIND_COLOURS, 0)
        for cell in self.cells:
            counts[cell.kind] += 1
        return counts

    def rows(self) -> list[list[str]]:
        """One row per action: the action name, then each resource's outcome."""
        width = len(self.resources)
        return [
            [action, *(c.outcome for c in self.cells[i * width : (i + 1) * width])]
            for i, action in enumerate(self.actions)
        ]

    def text(self) -> str:
        """The matrix as an aligned text table, its resources spelled out, and the counts."""
        table = [["action", *(r.label for r in self.resources)], *self.rows()]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines = [
            "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            for row in table
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines += ["", "resources:"]
        lines += [
            f"  {r.label:<{max(len(x.label) for x in self.resources)}}  {r.id}  {r.type}"
            for r in self.resources
        ]
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items() if n)
        lines += ["", f"subject {self.subject}, {len(self.cells)} cells: {counts}"]
        return "\n".join(lines)

    def to_frame(self) -> Any:
        """A pandas DataFrame: one row per action, one column per resource label."""
        import pandas as pd

        frame = pd.DataFrame(
            [row[1:] for row in self.rows()],
            index=list(self.actions),
            columns=[r.label for r in self.resources],
        )
        frame.index.name = "action"
        return frame

    def styled(self) -> Any:
        """:meth:`to_frame` styled with a background colour per kind of outcome."""
        by_outcome = {c.outcome: KIND_COLOURS[c.kind] for c in self.cells}
        return self.to_frame().style.map(
            lambda value: f"background-color: {by_outcome.get(value, '')}"
        )

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        """A notebook's view: the outcomes tinted by kind, the resources, the counts."""
        from authzkit.shared.matrix.display import matrix_html

        return matrix_html(self)


def outcome_cell(
    result: Authorized | ChallengeRequired | AuthzError, action: str, resource: MatrixResource
) -> MatrixCell:
    """The cell for what one plain authorize request gave (an outcome or the error raised)."""
    if isinstance(result, Authorized):
        return MatrixCell(
            action, resource, result.status, "authorized" if result.authorized else "other", 200
        )
    if isinstance(result, ChallengeRequired):
        kinds = ", ".join(result.required_types) or "no kind named"
        return MatrixCell(action, resource, f"challenge: {kinds}", "challenge", 403, result.type)
    if result.type == UNAUTHORIZED:
        return MatrixCell(
            action, resource, "unauthorized", "unauthorized", result.status, result.type
        )
    text = result.type or (
        f"HTTP {result.status} {type(result).__name__}" if result.status else type(result).__name__
    )
    return MatrixCell(action, resource, text, "other", result.status, result.type)


__all__ = [
    "KIND_COLOURS",
    "MatrixCell",
    "MatrixResource",
    "PolicyMatrix",
    "outcome_cell",
]
