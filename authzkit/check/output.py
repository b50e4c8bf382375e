"""The report in four forms: a terminal table, JSON, JUnit XML (CI dashboards) and Markdown.

Rows are grouped by SPEC section in :data:`SECTIONS` order; every form ends with the counts.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

from authzkit.check.results import CheckReport, grouped

MARKS = {"pass": "PASS", "diff": "DIFF", "fail": "FAIL", "skip": "skip", "not-offered": "n/o"}


def counts_line(report: CheckReport) -> str:
    """``33 pass, 0 diff, 0 fail, 1 skip`` (and ``N not-offered`` when a row is)."""
    return ", ".join(
        f"{n} {verdict}" for verdict, n in report.summary.items() if n or verdict != "not-offered"
    )


def terminal(report: CheckReport, *, width: int = 100) -> str:
    """A plain-text table grouped by section, the counts at the end."""
    target = report.target
    where = "sandbox" if target.get("sandbox") else "real environment"
    lines = [
        f"authzkit check: {target.get('base_url')} ({where}, dialect {target.get('dialect')})",
        "",
    ]
    for section, rows in grouped(report):
        lines.append(f"[{section}]")
        for row in rows:
            flag = " (security)" if row.security and row.verdict == "fail" else ""
            detail = f"{row.detail}{flag}"
            room = max(20, width - 50)
            lines.append(
                f"  {MARKS[row.verdict]:<4}  {row.id:<34} "
                f"{detail if len(detail) <= room else detail[: room - 1] + '…'}"
            )
        lines.append("")
    lines.append(f"{len(report.rows)} rows: {counts_line(report)}")
    return "\n".join(lines)


def write_json(report: CheckReport, path: Path) -> None:
    path.write_text(
        json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def junit(report: CheckReport) -> str:
    """One ``<testcase>`` per row: ``failure`` for fail, ``skipped`` for skip; a ``diff`` is
    a pass whose ``system-out`` names the difference."""
    summary = report.summary
    suite = ET.Element(
        "testsuite",
        name="authzkit.check",
        tests=str(len(report.rows)),
        failures=str(summary["fail"]),
        skipped=str(summary["skip"] + summary["not-offered"]),
        errors="0",
    )
    for row in report.rows:
        case = ET.SubElement(
            suite, "testcase", classname=f"authzkit.check.{row.section}", name=row.id
        )
        if row.verdict == "fail":
            failure = ET.SubElement(case, "failure", message=row.detail)
            failure.text = "\n\n".join(e.curl for e in row.evidence)
        elif row.verdict in ("skip", "not-offered"):
            ET.SubElement(case, "skipped", message=row.detail)
        elif row.verdict == "diff":
            ET.SubElement(case, "system-out").text = f"published dialect: {row.detail}"
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: CheckReport) -> str:
    """A table per section, for partner teams."""
    target = report.target
    lines = [
        "# authzkit check",
        "",
        f"Target: `{target.get('base_url')}` — "
        f"{'sandbox' if target.get('sandbox') else 'real environment'}, "
        f"dialect {target.get('dialect')}",
        "",
        f"**{counts_line(report)}**",
        "",
    ]
    for section, rows in grouped(report):
        lines += [f"## {section}", "", "| row | verdict | SPEC | detail |", "|---|---|---|---|"]
        for row in rows:
            verdict = row.verdict + (" (security)" if row.security else "")
            lines.append(f"| `{row.id}` | {verdict} | {_cell(row.spec)} | {_cell(row.detail)} |")
        lines.append("")
    return "\n".join(lines)


__all__ = ["MARKS", "counts_line", "grouped", "junit", "markdown", "terminal", "write_json"]
