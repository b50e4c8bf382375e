"""The checker's results: rows with a verdict and their evidence, and the report of a run.

A row is one stable statement of SPEC checked on one environment; its evidence is the
recorded exchanges (secrets already shell variables, bodies masked), so a partner team can
replay each row with curl. Nothing here sends a request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from authzkit.client.exchanges import Exchange

# not-offered: an optional API the target does not publish (AuthZEN batch or search): said,
# never counted as a pass.
VERDICTS = ("pass", "diff", "fail", "skip", "not-offered")
# Sections in the order the terminal, Markdown and JUnit outputs show them.
SECTIONS = (
    "token",
    "keys",
    "authorize",
    "challenge",
    "errors",
    "access_token",
    "transport",
    "authzen",
    "interop",
)
BODY_EXCERPT = 500


@dataclass(frozen=True)
class Evidence:
    """One exchange a row relied on: safe to print and to paste as curl."""

    method: str
    url: str
    status: int
    request_body: Any
    body_excerpt: str
    curl: str

    @classmethod
    def from_exchange(cls, exchange: Exchange) -> Evidence:
        """Built from a recorded exchange (already masked by the recorder)."""
        body = exchange.response_body
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        if exchange.status == 0:
            text = f"no answer: {exchange.error}"
        return cls(
            exchange.method,
            exchange.url,
            exchange.status,
            exchange.request_body,
            (text or "")[:BODY_EXCERPT],
            exchange.curl(),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "request_body": self.request_body,
            "body_excerpt": self.body_excerpt,
            "curl": self.curl,
        }


@dataclass(frozen=True)
class CheckRow:
    """One row of the report: what was checked, against which SPEC section, and the verdict."""

    id: str
    title: str
    spec: str
    section: str
    verdict: str
    detail: str
    security: bool = False
    evidence: tuple[Evidence, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "spec": self.spec,
            "section": self.section,
            "verdict": self.verdict,
            "detail": self.detail,
            "security": self.security,
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True)
class Finding:
    """What a row's check found: a verdict and its detail (evidence is added by the runner)."""

    verdict: str
    detail: str
    exchanges: tuple[Exchange, ...] = ()


class Skip(Exception):
    """Raised inside a check: the row is ``skip`` with this reason (a missing input, a
    prerequisite that failed, a wrong answer that is not allowed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RowSpec:
    """A row's identity and how to check it; ``requests`` bounds the calls it makes."""

    id: str
    title: str
    spec: str
    check: Callable[[Any], Finding] = field(repr=False)
    requests: int = 1
    security: bool = False

    @property
    def section(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class CheckReport:
    """The rows of one run, the target they were checked on, and the exit code."""

    target: Mapping[str, Any]
    rows: list[CheckRow]

    @property
    def summary(self) -> dict[str, int]:
        """``{"pass": n, "diff": n, "fail": n, "skip": n, "not-offered": n}``."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.rows:
            counts[row.verdict] += 1
        return counts

    @property
    def exit_code(self) -> int:
        """0 without a ``fail``, 1 with any."""
        return 1 if any(row.verdict == "fail" for row in self.rows) else 0

    def row(self, row_id: str) -> CheckRow:
        """The row named ``row_id`` (KeyError if it did not run)."""
        for row in self.rows:
            if row.id == row_id:
                return row
        raise KeyError(row_id)

    def verdicts(self) -> dict[str, str]:
        """Row id → verdict, for quick assertions and notebooks."""
        return {row.id: row.verdict for row in self.rows}

    def to_json(self) -> dict[str, Any]:
        return {
            "target": dict(self.target),
            "rows": [row.to_json() for row in self.rows],
            "summary": self.summary,
        }

    def to_frame(self) -> Any:
        """A pandas DataFrame (imported here: pandas stays out of ``import authzkit``)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "id": r.id,
                    "section": r.section,
                    "title": r.title,
                    "spec": r.spec,
                    "verdict": r.verdict,
                    "security": r.security,
                    "detail": r.detail,
                }
                for r in self.rows
            ],
            columns=["id", "section", "title", "spec", "verdict", "security", "detail"],
        )

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.summary.items() if v or k != "not-offered")
        return f"CheckReport({len(self.rows)} rows: {counts})"

    def _repr_html_(self) -> str:
        """A notebook's view: the rows by section, verdicts coloured, evidence under each."""
        from authzkit.check.report_display import report_html

        return report_html(self, list(grouped(self)))


def grouped(report: CheckReport) -> Iterator[tuple[str, list[CheckRow]]]:
    """``(section, rows)`` in :data:`SECTIONS` order (then any other section's), empty
    sections left out: the order every form of the report shows."""
    for section in (*SECTIONS, *sorted({r.section for r in report.rows} - set(SECTIONS))):
        rows = [r for r in report.rows if r.section == section]
        if rows:
            yield section, rows


__all__ = [
    "BODY_EXCERPT",
    "SECTIONS",
    "VERDICTS",
    "CheckReport",
    "CheckRow",
    "Evidence",
    "Finding",
    "RowSpec",
    "Skip",
    "grouped",
]
