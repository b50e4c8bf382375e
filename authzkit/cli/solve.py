"""The answer ``authzkit solve`` sends: the one the user gave, or a refusal.

An answer typed or piped is read before any request and is the only one offered; when it
fits no kind the challenge accepts, the command exits 2 rather than send another or guess
(docs/internals.md, "The answer authzkit solve sends").
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from authzkit.client.answers import TOTP_SECRET
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret

if TYPE_CHECKING:
    from authzkit.client.answers import Answers
    from authzkit.sandbox.world import World

NEEDS_KIND = "--answer-stdin needs --kind, or a challenge with one required type"


def typed_answer(args: argparse.Namespace) -> Secret | None:
    """The answer the user gave (``--answer-stdin``, or typed at the ``--kind`` prompt),
    read before any request is sent; None when the user gave none."""
    if args.answer_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
        if not value:
            raise ConfigError(
                "--answer-stdin: standard input held no answer (pipe one line, "
                "e.g. `echo $PIN | authzkit solve ACTION --answer-stdin`)"
            )
        return Secret(value)
    if args.kind is not None and sys.stdin.isatty():
        return Secret(getpass.getpass(f"{args.kind}: "))
    return None


def kind_for(required_types: Sequence[str], kind: str | None) -> str:
    """The kind a typed answer is sent as: ``--kind`` when the challenge accepts it, else
    the challenge's only kind; a :class:`ConfigError` when neither holds, because sending
    the answer as a guessed kind (or something else instead) would not be what was typed."""
    accepted = ", ".join(required_types) or "no kind"
    if kind is None:
        if len(required_types) != 1:
            raise ConfigError(f"{NEEDS_KIND} (this challenge accepts {accepted})")
        return required_types[0]
    if kind not in required_types:
        raise ConfigError(f"--kind {kind}: this challenge accepts {accepted}")
    return kind


def solve_answers(
    connection: Any, args: argparse.Namespace, subject: str | None, typed: Secret | None
) -> Answers:
    """What the solution is built from: the typed answer and nothing else when there is
    one; otherwise the environment's answers (``--kind`` keeps only that kind)."""
    if typed is not None:
        return lambda challenge: {kind_for(challenge.required_types, args.kind): typed}
    known = connection.answers(subject)
    if args.kind is None:
        return dict(known)
    return {
        k: v
        for k, v in known.items()
        if k == args.kind or (args.kind == "totp" and k == TOTP_SECRET)
    }


def check_on_world(world: World, args: argparse.Namespace, typed: Secret | None) -> None:
    """Before the embedded sandbox starts: ``--subject`` is one of its world, and a typed
    answer fits the action's challenge (an action the world lacks is left to the service,
    whose answer is worth seeing)."""
    if args.subject is not None and args.subject not in world.subjects:
        raise ConfigError(
            f"--subject {args.subject!r} is not in the sandbox world "
            f"(known: {', '.join(world.subjects)})"
        )
    action = world.actions.get(args.action)
    if typed is not None and action is not None and action.required_types:
        kind_for(action.required_types, getattr(args, "kind", None))


__all__ = ["NEEDS_KIND", "check_on_world", "kind_for", "solve_answers", "typed_answer"]
