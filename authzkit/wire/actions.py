"""The two actions a run chooses: one that needs no challenge and one that demands one.

Each has a command-line option, a variable and the sandbox's demo action that serves when
neither is given on a sandbox (never on a real environment: a wrong guess there would send
an action nobody asked for). :meth:`authzkit.wire.config.Settings.action` chooses among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION


@dataclass(frozen=True)
class ActionSetting:
    """One of the two actions a run chooses: its command-line option, its variable, what it
    must be, and the sandbox's demo action that serves when neither is given on a sandbox."""

    kind: str
    option: str
    variable: str
    meaning: str
    sandbox_default: str

    def missing(self, where: str | None) -> str:
        """The :class:`ConfigError` message when nothing chooses this action."""
        place = f" on {where}" if where else ""
        return (
            f"no {self.kind} action: pass {self.option} NAME or set {self.variable} "
            f"({self.meaning}{place}); the sandbox's demo action {self.sandbox_default!r} "
            f"is assumed only on an authzkit sandbox whose world lists it"
        )


# "plain": an action that needs no challenge; "challenge": one that demands a challenge.
ACTIONS: dict[str, ActionSetting] = {
    "plain": ActionSetting(
        "plain",
        "--action",
        "AUTHZKIT_PLAIN_ACTION",
        "an action that needs no challenge",
        DEFAULT_PLAIN_ACTION,
    ),
    "challenge": ActionSetting(
        "challenge",
        "--challenge-action",
        "AUTHZKIT_CHALLENGE_ACTION",
        "an action that demands a challenge",
        DEFAULT_CHALLENGE_ACTION,
    ),
}


def action_setting(kind: str) -> ActionSetting:
    """The :class:`ActionSetting` of ``kind`` (``plain`` or ``challenge``)."""
    try:
        return ACTIONS[kind]
    except KeyError:
        raise ConfigError(
            f"action kind must be one of {', '.join(ACTIONS)}, got {kind!r}"
        ) from None


__all__ = ["ACTIONS", "ActionSetting", "action_setting"]
