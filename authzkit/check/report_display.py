"""How a :class:`~authzkit.check.results.CheckReport` shows in a notebook: the target and the
counts, then the rows by SPEC section with their verdicts coloured, each row's evidence (the
exchanges it relied on, with their curl commands) opening under it.

The evidence was masked by the recorder when it was recorded (secrets are shell variables,
response bodies masked); the target's values pass :func:`~authzkit.wire.redact.mask_mapping`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from authzkit.wire.html import (
    Html,
    badge,
    card,
    code,
    details,
    heading,
    join,
    key_values,
    pre,
    table,
)
from authzkit.wire.redact import mask_mapping

# The report imports this module when it is first shown: reports, rows and evidence are
# taken as ``Any`` here, and the report hands over its rows grouped by section.
VERDICT_TONES = {
    "pass": "ok",
    "diff": "info",
    "fail": "bad",
    "skip": "neutral",
    "not-offered": "neutral",
}


def verdict_badge(verdict: str, security: bool = False) -> Html:
    """The verdict tinted by what it means; a failed security row says so."""
    text = f"{verdict} (security)" if security and verdict == "fail" else verdict
    return badge(text, VERDICT_TONES.get(verdict, "neutral"))


def _evidence(evidence: Sequence[Any]) -> Html | str:
    if not evidence:
        return ""
    folds = [
        join(
            heading(join(code(f"{e.method} {e.url}"), " → ", f"HTTP {e.status or 'none'}")),
            pre(e.body_excerpt) if e.body_excerpt else "",
            pre(e.curl),
        )
        for e in evidence
    ]
    count = len(evidence)
    return details(f"{count} exchange{'s' if count != 1 else ''}", *folds)


def _row(row: Any) -> tuple[Any, ...]:
    return (
        code(row.id),
        verdict_badge(row.verdict, row.security),
        row.title,
        row.spec,
        row.detail,
        _evidence(row.evidence),
    )


def report_html(report: Any, sections: Sequence[tuple[str, Sequence[Any]]]) -> Html:
    """The report's card: target, counts, then one table per ``(section, rows)`` of
    ``sections`` (:func:`authzkit.check.results.grouped`)."""
    target = mask_mapping(dict(report.target))
    where = "sandbox" if target.get("sandbox") else "real environment"
    counts = join(
        *(join(verdict_badge(v), f" {n}  ") for v, n in report.summary.items() if n),
    )
    failed = bool(report.exit_code)
    title = join(
        badge("authzkit check", "info"),
        " ",
        badge("a row failed" if failed else "no row failed", "bad" if failed else "ok"),
        f" {len(report.rows)} rows",
    )
    facts = key_values(
        [
            ("target", code(target.get("base_url"))),
            ("token endpoint", code(target["token_url"]) if target.get("token_url") else None),
            ("issuer", code(target["issuer"]) if target.get("issuer") else None),
            ("kind", f"{where}, dialect {target.get('dialect')}"),
            ("verdicts", counts),
        ]
    )
    headers = ("row", "verdict", "what", "SPEC", "detail", "evidence")
    tables = [
        join(heading(section), table(headers, [_row(r) for r in rows]))
        for section, rows in sections
    ]
    return card(title, facts, *tables, tone="bad" if failed else "ok", wide=True)


__all__ = ["VERDICT_TONES", "report_html", "verdict_badge"]
