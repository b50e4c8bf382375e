"""The layout of a trace: exchanges written as Markdown, a Mermaid sequence diagram then each
request and response with its curl command.

A rendered trace is a :class:`Trace`: a ``str`` that a notebook shows as Markdown. One
layout for ``authzkit trace`` (a flow the client ran, :mod:`authzkit.cli.trace`) and for
a failing test's requests to the sandbox (:mod:`authzkit.testing.trace`), so a partner team
reads both the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from authzkit.client.exchanges import Exchange

if TYPE_CHECKING:
    from authzkit.shared.flows import Step


class Trace(str):
    """A trace's Markdown: a ``str`` in every way (its text ``repr`` included), which a
    notebook shows rendered, its Mermaid sequence diagram drawn (JupyterLab renders
    ```` ```mermaid ```` fences)."""

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Arrow:
    """One request and its answer in the diagram: ``RS->>participant: request`` and back."""

    participant: str
    request: str  # "POST /token"
    answer: str  # "200 allow"


def mermaid(caller: str, participants: Sequence[str], arrows: Sequence[Arrow]) -> str:
    """A Mermaid ``sequenceDiagram``: ``caller`` on the left, then those of
    ``participants`` (in that order) that an arrow reaches."""
    lines = ["sequenceDiagram", f"    participant RS as {caller}"]
    lines += [
        f"    participant {p}" for p in participants if any(a.participant == p for a in arrows)
    ]
    for arrow in arrows:
        lines.append(f"    RS->>{arrow.participant}: {arrow.request}")
        lines.append(f"    {arrow.participant}-->>RS: {arrow.answer}")
    return "\n".join(lines)


def steps_section(steps: Sequence[Step]) -> list[str]:
    """The lines of a flow's ``## Steps`` table: each step's title, HTTP status and outcome."""
    rows = [
        f"| {n} | {s.title} | {s.status if s.status is not None else '-'} | {s.outcome} |"
        for n, s in enumerate(steps, start=1)
    ]
    return ["## Steps", "", "| # | step | HTTP | outcome |", "|---|---|---|---|", *rows]


def json_block(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False)
    return f"```json\n{text}\n```"


def exchange_section(number: int, exchange: Exchange, answer: str) -> list[str]:
    """The lines of one exchange: a heading ending in ``answer``, its bodies, its curl."""
    out = [
        f"### {number}. `{exchange.name}`: {exchange.method} "
        f"{urlsplit(exchange.url).path} → {answer}",
        "",
    ]
    if exchange.request_body is not None:
        out += ["Request body:", "", json_block(exchange.request_body), ""]
    if exchange.response_body is not None:
        out += ["Response body:", "", json_block(exchange.response_body), ""]
    return [*out, "```sh", exchange.curl(), "```", ""]


__all__ = ["Arrow", "Trace", "exchange_section", "json_block", "mermaid", "steps_section"]
