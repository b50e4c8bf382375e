"""Wrong answers need consent: the one rule of every flow that provokes errors on purpose.

A wrong PIN may lock a person out, so a wrong answer goes only to a sandbox or with
``--allow-wrong-answers`` / ``AUTHZKIT_ALLOW_WRONG_ANSWERS=1``; otherwise the step is
skipped with :data:`SKIP_MESSAGE` (docs/internals.md, "Consent to wrong answers").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from authzkit.wire.variables import allow_wrong_answers, authzkit_variables

if TYPE_CHECKING:
    from authzkit.shared.connection import Connection

ALLOW_WRONG_ANSWERS_VAR = "AUTHZKIT_ALLOW_WRONG_ANSWERS"
ALLOW_WRONG_ANSWERS_FLAG = "--allow-wrong-answers"
SKIPPED = "skipped (real environment)"
WHY = (
    f"a wrong answer may count against a person's PIN; pass {ALLOW_WRONG_ANSWERS_FLAG} "
    f"or set {ALLOW_WRONG_ANSWERS_VAR}=1"
)
SKIP_MESSAGE = f"{SKIPPED}: {WHY}"


def consent_from_env(
    environ: Mapping[str, str] | None = None, dotenv: Path | None = Path(".env")
) -> bool | None:
    """``AUTHZKIT_ALLOW_WRONG_ANSWERS`` (the environment first, then ``.env``, read as
    :meth:`Settings.from_env <authzkit.wire.config.Settings.from_env>` reads it) as a boolean;
    None when unset or empty. A value that is not a boolean is a :class:`ConfigError`."""
    return allow_wrong_answers(authzkit_variables(environ, dotenv))


@dataclass(frozen=True)
class WrongAnswerPolicy:
    """Whether wrong answers may be sent to one environment, and why (for a line of output)."""

    allowed: bool
    reason: str

    @classmethod
    def for_connection(
        cls,
        connection: Connection,
        *,
        consent: bool | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> WrongAnswerPolicy:
        """The policy for ``connection``. ``consent`` is the command's flag: True allows, False
        refuses, None (flag not given) leaves it to ``AUTHZKIT_ALLOW_WRONG_ANSWERS``.
        A sandbox authzkit started has no person to lock out: always allowed there."""
        if connection.is_sandbox:
            return cls(True, "the embedded sandbox (no person to lock out)")
        if consent is None:
            consent = (
                connection.settings.allow_wrong_answers
                if environ is None
                else consent_from_env(environ, dotenv=None)
            )
            source = f"{ALLOW_WRONG_ANSWERS_VAR}=1"
        else:
            source = ALLOW_WRONG_ANSWERS_FLAG
        if consent:
            return cls(True, f"allowed by {source}")
        return cls(False, WHY)

    def skip_message(self) -> str:
        """The one line a skipped wrong-answer step shows (empty when allowed)."""
        return "" if self.allowed else SKIP_MESSAGE


def wrong_answers_allowed(
    connection: Connection, *, consent: bool | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """True when a deliberately wrong answer may be sent to ``connection`` (see the module doc)."""
    return WrongAnswerPolicy.for_connection(connection, consent=consent, environ=environ).allowed


__all__ = [
    "ALLOW_WRONG_ANSWERS_FLAG",
    "ALLOW_WRONG_ANSWERS_VAR",
    "SKIPPED",
    "SKIP_MESSAGE",
    "WHY",
    "WrongAnswerPolicy",
    "consent_from_env",
    "wrong_answers_allowed",
]
