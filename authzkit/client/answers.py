"""Answers to a challenge: which credential to send, from what the caller supplied.

``answers`` is a mapping kind → value (``{"pin": "1234"}``) or a callable that is given
the :class:`ChallengeRequired` and returns such a mapping (a widget, a prompt). SPEC's
``required_types`` lists the kinds the subject may answer with; the first listed kind the
caller can answer is chosen. A ``"totp_secret"`` entry (base32) generates the current TOTP
code from the injected clock, so tests and notebooks never wait for a time window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyotp

from authzkit.client.outcomes import ChallengeRequired
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret, reveal

TOTP_SECRET = "totp_secret"

Answers = Mapping[str, Any] | Callable[[ChallengeRequired], Mapping[str, Any]]


@dataclass(frozen=True)
class Answer:
    """The chosen credential kind and its value (kept as a :class:`Secret`)."""

    kind: str
    value: Secret = field(repr=False)


def totp_now(secret: str | Secret, clock: Clock | None = None) -> str:
    """The current TOTP code for a base32 ``secret`` at the clock's time."""
    try:
        return pyotp.TOTP(reveal(secret)).at(int((clock or system_clock)()))
    except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
        raise ConfigError("the totp_secret is not a valid base32 secret") from exc


def choose_answer(
    challenge: ChallengeRequired, answers: Answers, *, clock: Clock | None = None
) -> Answer:
    """One :class:`Answer` of a kind the challenge allows, or a :class:`ConfigError`.

    The error names the kinds on both sides, never a value.
    """
    supplied = answers(challenge) if callable(answers) else answers
    if not isinstance(supplied, Mapping):
        raise ConfigError("answers must be a mapping kind -> value (or a callable returning one)")
    for kind in challenge.required_types:
        value = supplied.get(kind)
        if value is not None and value != "":
            return Answer(kind, Secret(str(reveal(value))))
        if kind == "totp" and supplied.get(TOTP_SECRET):
            return Answer(kind, Secret(totp_now(supplied[TOTP_SECRET], clock)))
    offered = ", ".join(sorted(str(k) for k in supplied)) or "none"
    raise ConfigError(
        f"the challenge accepts {', '.join(challenge.required_types) or 'nothing'} "
        f"but the answers offer {offered}"
    )


def answers_from_credentials(credentials: Mapping[str, Any]) -> dict[str, Secret]:
    """Answers from a subject's credentials (a sandbox world's): kind → secret value.

    A ``totp`` credential is the base32 secret itself, so it becomes ``totp_secret``, from
    which the current code is generated at answer time.
    """
    return {
        (TOTP_SECRET if kind == "totp" else kind): Secret(str(value))
        for kind, value in credentials.items()
    }


def pick_answer(
    challenge: ChallengeRequired, answers: Answers, *, clock: Clock | None = None
) -> tuple[str, str]:
    """``(kind, value)`` of :func:`choose_answer`, the value revealed (for callers that send it)."""
    answer = choose_answer(challenge, answers, clock=clock)
    return answer.kind, answer.value.reveal()


__all__ = [
    "TOTP_SECRET",
    "Answer",
    "Answers",
    "answers_from_credentials",
    "choose_answer",
    "pick_answer",
    "totp_now",
]
