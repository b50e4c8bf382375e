"""The answer form's readout, as text and static HTML: what a terminal, nbval or an offline
HTML export shows where no widget frontend draws the form (see
:mod:`authzkit.widgets.display`). Each field says where its answer comes from, never the
answer; attempts read as :mod:`authzkit.widgets.attempt` writes them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from authzkit.client.outcomes import ChallengeRequired
from authzkit.widgets.attempt import Attempt, attempt_html, attempt_lines, label

NOT_SUBMITTED = "not submitted yet: type an answer and press Submit"


def summary_text(
    action: str,
    challenge: ChallengeRequired,
    states: Sequence[tuple[str, str]],
    attempts: Sequence[Attempt],
    secrets: list[Any],
) -> str:
    """The form's plain-text state: the challenge, each field's state, every attempt."""
    kinds = ", ".join(challenge.required_types)
    lines = [
        f"ChallengeForm: {action}, challenge {challenge.challenge_id}, answer with one of: {kinds}"
    ]
    lines += [f"  {kind}: {state}" for kind, state in states]
    for number, attempt in enumerate(attempts, start=1):
        lines += attempt_lines(number, attempt, secrets)
    if not attempts:
        lines.append(f"  {NOT_SUBMITTED}")
    return "\n".join(lines)


def summary_html(
    title_html: str,
    states: Sequence[tuple[str, str]],
    attempts: Sequence[Attempt],
    secrets: list[Any],
) -> str:
    """The same as HTML, with no input to type into (``title_html`` is already escaped)."""
    fields = "".join(
        f"<li>{html.escape(label(kind))}: {html.escape(state)}</li>" for kind, state in states
    )
    lines = "".join(
        f"<li>attempt {number}"
        f"{' (submitted automatically)' if attempt.automatic else ''}: "
        f"{attempt_html(attempt, secrets)}</li>"
        for number, attempt in enumerate(attempts, start=1)
    )
    outcome = f"<ul>{lines}</ul>" if lines else f"<p><i>{html.escape(NOT_SUBMITTED)}</i></p>"
    return f"<p>{title_html}</p><ul>{fields}</ul>{outcome}"


__all__ = ["NOT_SUBMITTED", "summary_html", "summary_text"]
