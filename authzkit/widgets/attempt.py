"""One submission of an answer form, and how it reads: as HTML in the form, as text elsewhere.

Pure functions of an :class:`Attempt` (no widgets here), so what a person sees in the form
and what a saved notebook shows as text are tested without a frontend. Neither ever holds a
secret: the answer itself is not kept, and every message is scrubbed of the known secrets.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from authzkit.client.outcomes import Authorized, ChallengeRequired, describe
from authzkit.wire.error_table import ERRORS
from authzkit.wire.errors import AuthzError
from authzkit.wire.redact import scrub

KIND_LABELS = {"pin": "PIN", "login_password": "Login password", "totp": "TOTP code"}
TYPED = "typed"

_GREEN, _AMBER, _RED = "#1a7f37", "#9a6700", "#cf222e"


def label(kind: str) -> str:
    """How a credential kind is called in the form (``pin`` → ``PIN``)."""
    return KIND_LABELS.get(kind, kind)


@dataclass(frozen=True)
class Attempt:
    """One submission: which kind was sent, where the answer came from, what came back.

    ``source`` is ``"typed"`` for a value entered in the form, else where the known answer
    came from (``"the sandbox world"``, ``"AUTHZKIT_ANSWER_PIN"``…); ``automatic`` tells
    whether the form submitted itself. ``header`` is the solution's protected header.
    """

    kind: str
    source: str
    outcome: Authorized | ChallengeRequired | None = None
    error: Exception | None = None
    header: Mapping[str, Any] | None = None
    automatic: bool = False

    @property
    def authorized(self) -> bool:
        return isinstance(self.outcome, Authorized) and self.outcome.authorized

    @property
    def final(self) -> bool:
        """True when this challenge cannot be answered again (solved, or dead)."""
        if self.authorized:
            return True
        error = self.error
        # A wrong answer may be corrected; no HTTP answer (a timeout) or a bug of ours may
        # be retried; any other refusal ends the challenge.
        return (
            isinstance(error, AuthzError)
            and error.status is not None
            and error.type != "srn:error:bad_challenge_solution"
        )

    def describe(self) -> str:
        """One line a reader understands: the outcome or the error type."""
        result = self.outcome if self.outcome is not None else self.error
        assert result is not None, "an attempt has an outcome or an error"
        headline = "a new challenge" if isinstance(result, ChallengeRequired) else None
        return describe(result, http=True, headline=headline)


def _status(colour: str, mark: str, headline: str) -> str:
    return (
        f"<span class='authzkit-status' style='color:{colour}'>{mark} "
        f"<b>{html.escape(headline)}</b></span>"
    )


def attempt_html(attempt: Attempt, secrets: Iterable[Any] = ()) -> str:
    """The form's outcome line: status, how it was answered, remedy, protected header."""
    secrets = list(secrets)
    via = f"answered with {label(attempt.kind)} ({html.escape(attempt.source)})"
    outcome, error = attempt.outcome, attempt.error
    if isinstance(outcome, Authorized):
        colour, mark = (_GREEN, "&#10004;") if outcome.authorized else (_AMBER, "&#9888;")
        text = (
            f"{_status(colour, mark, outcome.status)}"
            f" &mdash; HTTP 200, shape {outcome.shape} &middot; {via}"
        )
    elif isinstance(outcome, ChallengeRequired):
        text = f"&#9888; the service issued a new challenge: answer it above &middot; {via}"
    elif isinstance(error, AuthzError):
        status = f"HTTP {error.status}" if error.status is not None else "no HTTP answer"
        text = (
            f"{_status(_RED, '&#10008;', error.type or type(error).__name__)}"
            f" &mdash; {status} &middot; {via}"
        )
        kind = ERRORS.get(error.type or "")
        if kind is not None:
            text += f"<br>{html.escape(kind.meaning)} <i>What to do:</i> {html.escape(kind.remedy)}"
        else:
            text += f"<br>{html.escape(scrub(error.message, secrets))}"
    else:
        message = scrub(f"{type(error).__name__}: {error}", secrets)
        text = f"{_status(_RED, '&#10008;', message)} &middot; {via}"
    if attempt.header is not None:
        text += (
            "<br>Protected header of the solution: <code>"
            f"{html.escape(json.dumps(dict(attempt.header)))}</code>"
        )
    return text


def attempt_lines(number: int, attempt: Attempt, secrets: Iterable[Any] = ()) -> list[str]:
    """The attempt as indented text lines (a form's plain-text summary)."""
    how = "submitted automatically" if attempt.automatic else "submitted"
    lines = [
        f"  attempt {number}: {how} with {attempt.kind} ({attempt.source}) -> "
        f"{scrub(attempt.describe(), list(secrets))}"
    ]
    if attempt.header is not None:
        lines.append(f"    protected header: {json.dumps(dict(attempt.header))}")
    return lines


__all__ = ["KIND_LABELS", "TYPED", "Attempt", "attempt_html", "attempt_lines", "label"]
