"""The options several commands add, each defined once: ``--dialect``, ``--key-size``,
``--token-ttl``, ``--action`` and ``--challenge-action``, ``--allow-wrong-answers``, and the
sandbox a command starts when no environment is configured (:func:`add_sandbox_options`,
read back by :func:`sandbox_options`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from authzkit.shared.options.values import action_name, token_ttl
from authzkit.wire.actions import ACTIONS
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHORIZE_DIALECTS, DEFAULT_KEY_SIZE, DIALECTS, KEY_SIZES

if TYPE_CHECKING:
    from authzkit.wire.config import Settings


def add_dialect(
    parser: Any, help: str | None = None, choices: tuple[str, ...] = AUTHORIZE_DIALECTS
) -> None:
    """``--dialect``: what a sandbox started by the command speaks. A command offers
    ``authzen`` only once it runs on it (``choices=spec.DIALECTS``); the others keep the
    authorize API's two, so none runs draft flows on an AuthZEN PDP."""
    parser.add_argument(
        "--dialect",
        choices=choices,
        default=DIALECTS[0],
        help=help
        or "what an embedded sandbox speaks: the service's draft "
        "(default) or the provider's published API (OIDC token "
        "endpoint, bare 401s)",
    )


def add_key_size(parser: Any, help: str | None = None) -> None:
    """``--key-size``: the RSA key size of a sandbox the command starts."""
    parser.add_argument(
        "--key-size",
        type=int,
        choices=KEY_SIZES,
        default=DEFAULT_KEY_SIZE,
        help=help
        or "RSA key size of an embedded sandbox (default 4096, like "
        "the provider's key; ignored with AUTHZKIT_BASE_URL)",
    )


def add_token_ttl(parser: Any, default: int | None, help: str) -> None:
    """``--token-ttl S``: a sandbox's access token lifetime, whole seconds >= 1."""
    parser.add_argument("--token-ttl", type=token_ttl, default=default, metavar="S", help=help)


def add_action_options(
    parser: Any, plain_help: str | None = None, challenge_help: str | None = None
) -> None:
    """``--action`` and ``--challenge-action``: the actions a command sends. Their names,
    variables, meanings and demo defaults are their one definition in the wire layer
    (:data:`~authzkit.wire.actions.ACTIONS`, which ``Settings.action`` reads too); a help
    given here replaces the default one, built from that definition."""
    helps = {"plain": plain_help, "challenge": challenge_help}
    for kind, setting in ACTIONS.items():
        parser.add_argument(
            setting.option,
            type=action_name,
            default=None,
            metavar="NAME",
            help=helps[kind]
            or f"{setting.meaning} (default: {setting.variable}; on the embedded sandbox "
            f"{setting.sandbox_default})",
        )


def add_allow_wrong_answers(parser: Any) -> None:
    """``--allow-wrong-answers``: consent to send a deliberately wrong answer to a real
    environment. Absent, the value is None, so ``AUTHZKIT_ALLOW_WRONG_ANSWERS`` decides."""
    parser.add_argument(
        "--allow-wrong-answers",
        action="store_true",
        default=None,
        help="on a real environment, also send the deliberately wrong answer "
        "(srn:error:bad_challenge_solution); it may count against the "
        "subject's PIN. Same as AUTHZKIT_ALLOW_WRONG_ANSWERS=1; always "
        "sent to the embedded sandbox",
    )


# -- the sandbox a command starts ----------------------------------------------------------

SANDBOX_OPTIONS = {"key_size": DEFAULT_KEY_SIZE, "dialect": DIALECTS[0]}  # name -> default


def sandbox_options(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """``--key-size`` and ``--dialect`` for the sandbox the command starts, defaults filled
    in. With an environment configured no sandbox starts, so a given one is refused (exit
    2) instead of being ignored; :func:`add_sandbox_options` leaves them None when absent."""
    given = {
        name: getattr(args, name)
        for name in SANDBOX_OPTIONS
        if getattr(args, name, None) is not None
    }
    if given and not settings.uses_sandbox:
        option = "--" + next(iter(given)).replace("_", "-")
        raise ConfigError(
            f"{option} applies to the sandbox authzkit starts; with "
            f"AUTHZKIT_BASE_URL set none starts (drop {option})"
        )
    return {**SANDBOX_OPTIONS, **given}


def add_sandbox_options(
    parser: argparse.ArgumentParser,
    dialect_help: str | None = None,
    dialect_choices: tuple[str, ...] = AUTHORIZE_DIALECTS,
) -> None:
    """``--key-size`` and ``--dialect`` (defined above) of the
    sandbox a command starts when no environment is configured. Their value is None when
    not given, so :func:`sandbox_options` can tell a given one from the default."""
    add_key_size(
        parser,
        help=f"RSA key size of an embedded sandbox (default "
        f"{DEFAULT_KEY_SIZE}, like the provider's key; refused with "
        f"AUTHZKIT_BASE_URL)",
    )
    add_dialect(parser, help=dialect_help, choices=dialect_choices)
    parser.set_defaults(**dict.fromkeys(SANDBOX_OPTIONS))


__all__ = [
    "SANDBOX_OPTIONS",
    "add_action_options",
    "add_allow_wrong_answers",
    "add_dialect",
    "add_key_size",
    "add_sandbox_options",
    "add_token_ttl",
    "sandbox_options",
]
