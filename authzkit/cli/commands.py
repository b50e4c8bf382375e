"""``authzkit token | keys | authorize | solve | demo``: the client's commands.
(``authorize`` on an AuthZEN PDP is :mod:`authzkit.cli.authzen`'s.)

Configuration comes from ``AUTHZKIT_*`` / ``.env``; without a base URL each command starts
the embedded sandbox for its own run. Output is for people: secrets are shown masked
unless a flag asks for the value itself (``token --show``, to pipe into another tool).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from authzkit.cli.authzen import add_entity_options
from authzkit.cli.solve import check_on_world, solve_answers, typed_answer
from authzkit.shared.options import (
    action_name,
    add_action_options,
    add_allow_wrong_answers,
    add_sandbox_options,
    sandbox_options,
)
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import mask
from authzkit.wire.spec import AUTHZEN, CREDENTIAL_KINDS, DEFAULT_RESOURCE_TYPE, DIALECTS

if TYPE_CHECKING:
    from authzkit.wire.config import Settings
    from authzkit.wire.redact import Secret


def connect_for(args: argparse.Namespace, **options: Any) -> Any:
    """The environment a command runs on: the configured one, or an embedded sandbox with
    the command's ``--key-size`` and ``--dialect``."""
    from authzkit.shared.connection import connect
    from authzkit.shared.extras import require
    from authzkit.wire.config import Settings

    settings = options.pop("settings", None) or Settings.from_env()
    # --action/--challenge-action win over AUTHZKIT_PLAIN_ACTION/_CHALLENGE_ACTION
    settings = settings.with_actions(
        plain=getattr(args, "action", None), challenge=getattr(args, "challenge_action", None)
    )
    started = sandbox_options(args, settings)
    if settings.uses_sandbox:  # named before anything starts, not as a traceback
        require("sandbox", f"authzkit {args.command} without AUTHZKIT_BASE_URL")
    return connect(settings, **started, **options)


def _add_subject(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", type=action_name, help="action name, e.g. show_account_balance_public"
    )
    parser.add_argument(
        "--subject",
        default=None,
        help="sandbox subject (default: AUTHZKIT_SUBJECT_TOKEN's when set, else the world's "
        "first subject that owns a resource, alice in the demo world); a real environment "
        "uses AUTHZKIT_SUBJECT_TOKEN; on an AuthZEN PDP the subject's id (default "
        "AUTHZKIT_SUBJECT_ID)",
    )
    parser.add_argument("--resource-id", help="resource id (default: one the subject owns)")
    parser.add_argument(
        "--resource-type", default=None, help=f"resource type (default {DEFAULT_RESOURCE_TYPE})"
    )
    parser.add_argument("--user-agent", default="authzkit-cli")
    parser.add_argument("--user-ip", default=None)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def run_token(args: argparse.Namespace) -> int:
    """A token from the configured endpoint; the one command that needs no authorization
    host, so an issuer or token URL alone is enough (never the sandbox then)."""
    from authzkit.shared.connection import connect_token_endpoint
    from authzkit.shared.flows import token_line
    from authzkit.wire.config import Settings

    settings = Settings.from_env()
    sandbox_options(args, settings)  # a given --key-size/--dialect is refused, not ignored
    with (
        connect_token_endpoint(settings)
        if settings.base_url is None and not settings.uses_sandbox
        else connect_for(args)
    ) as connection:
        client = getattr(connection, "client", connection)
        token = client.access_token()
        print(
            token
            if args.show
            else f"access token: {mask(token)} "
            f"({token_line(client.token_provider)}; --show "
            f"prints the token itself)"
        )
    return 0


def run_keys(args: argparse.Namespace) -> int:
    with connect_for(args) as connection:
        key = connection.client.encryption_key()
        _print_json({"use=enc kid": key.kid, "jwk": dict(key.jwk)})
    return 0


def subject_of(connection: Any, args: argparse.Namespace) -> str | None:
    """The sandbox subject a command acts as: ``--subject``, or None for the environment's
    own (``AUTHZKIT_SUBJECT_TOKEN``'s when set, else the world's default subject: see
    :attr:`Connection.subject <authzkit.shared.connection.Connection.subject>`). On a real
    environment the subject is AUTHZKIT_SUBJECT_TOKEN's, so a ``--subject`` there is
    refused rather than silently ignored."""
    if args.subject is not None and not connection.is_sandbox:
        raise ConfigError(
            "--subject names a sandbox subject; on a real environment the "
            "subject is the holder of AUTHZKIT_SUBJECT_TOKEN"
        )
    return None if args.subject is None else str(args.subject)


def _resource(connection: Any, args: argparse.Namespace, subject: str | None) -> tuple[str, str]:
    resource_id, resource_type = (
        connection.resource(subject)
        if args.resource_id is None
        else (args.resource_id, DEFAULT_RESOURCE_TYPE)
    )
    return resource_id, args.resource_type or resource_type


def _as_json(outcome: Any) -> dict[str, Any]:
    from authzkit.client.outcomes import ChallengeRequired

    if isinstance(outcome, ChallengeRequired):
        return {
            "outcome": "challenge_required",
            "challenge_id": outcome.challenge_id,
            "required_types": list(outcome.required_types),
        }
    return {
        "outcome": outcome.status,
        "action": outcome.action,
        "shape": outcome.shape,
        "id": outcome.id,
    }


def _embedded_world(
    args: argparse.Namespace, settings: Settings, typed: Secret | None = None
) -> None:
    """Refuse a ``--subject`` or typed answer the embedded sandbox's world cannot take,
    before that sandbox starts (a configured environment is checked once connected)."""
    if settings.uses_sandbox:
        from authzkit.sandbox.world import World

        check_on_world(World.default(), args, typed)


def run_authorize(args: argparse.Namespace) -> int:
    """One authorization: the draft's or published API's, or one AuthZEN evaluation
    (``--dialect authzen``, ``AUTHZKIT_DIALECT``, or a PDP's metadata at the URL)."""
    from authzkit.cli import authzen
    from authzkit.wire.config import Settings

    settings = Settings.from_env()
    dialect = args.dialect or settings.dialect or (DIALECTS[0] if settings.uses_sandbox else None)
    only = authzen.given_authzen_options(args)
    if dialect is not None and dialect != AUTHZEN and only:
        raise ConfigError(f"{authzen.only_on_authzen(only)}, not the {dialect} dialect")
    if dialect != AUTHZEN:
        _embedded_world(args, settings)
    with authzen.connect_in_dialect(args, settings, args.dialect) as connection:
        if connection.client.dialect == AUTHZEN:
            return authzen.authorize(connection, args)
        if only:
            raise ConfigError(f"{authzen.only_on_authzen(only)}; {connection.where} is none")
        subject = subject_of(connection, args)
        resource_id, resource_type = _resource(connection, args, subject)
        outcome = connection.client.authorize(
            args.action,
            resource_id=resource_id,
            resource_type=resource_type,
            subject_token=connection.subject_token(subject),
            user_agent=args.user_agent,
            user_ip=args.user_ip,
        )
        _print_json(_as_json(outcome))
    return 0


def run_solve(args: argparse.Namespace) -> int:
    """Authorize, solving the challenge with the answer the user gave (or, without one,
    the environment's); see :mod:`authzkit.cli.solve`."""
    from authzkit.wire.config import Settings

    typed = typed_answer(args)
    settings = Settings.from_env()
    _embedded_world(args, settings, typed)
    with connect_for(args, settings=settings) as connection:
        subject = subject_of(connection, args)
        resource_id, resource_type = _resource(connection, args, subject)
        outcome = connection.client.authorize_with_challenge(
            args.action,
            # None: the environment's own subject (cli/solve.py's annotation says str).
            answers=solve_answers(connection, args, subject, typed),
            resource_id=resource_id,
            resource_type=resource_type,
            subject_token=connection.subject_token(subject),
            user_agent=args.user_agent,
            user_ip=args.user_ip,
        )
        _print_json(_as_json(outcome))
    if typed is not None and outcome.shape == "A":
        print(
            f"authzkit solve: {args.action} was authorized without a challenge; the answer "
            f"given was not sent",
            file=sys.stderr,
        )
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from authzkit.cli.demo import print_demo

    with connect_for(args) as connection:
        return print_demo(connection, allow_wrong_answers=args.allow_wrong_answers)


def register(subparsers: Any) -> None:
    """Add the client commands to the ``authzkit`` parser."""
    token = subparsers.add_parser("token", help="obtain an access token (client credentials)")
    token.add_argument(
        "--show", action="store_true", help="print the token itself (for piping), not a masked form"
    )
    add_sandbox_options(token)
    token.set_defaults(run=run_token)

    keys = subparsers.add_parser("keys", help="show the use=enc key from discovery")
    add_sandbox_options(keys)
    keys.set_defaults(run=run_keys)

    authorize = subparsers.add_parser("authorize", help="ask for one authorization")
    _add_subject(authorize)
    add_entity_options(authorize, with_subject=False)
    add_sandbox_options(
        authorize,
        dialect_help="what the service speaks: the draft (default), the provider's published "
        "API, or authzen (an AuthZEN PDP; prints authorized or denied); without "
        "AUTHZKIT_BASE_URL, the embedded sandbox's",
        dialect_choices=DIALECTS,
    )
    authorize.set_defaults(run=run_authorize)

    solve = subparsers.add_parser("solve", help="authorize, solving the challenge if asked")
    _add_subject(solve)
    solve.add_argument(
        "--kind",
        choices=CREDENTIAL_KINDS,
        help="credential kind to answer with (prompted without echo; default: "
        "the sandbox world's or AUTHZKIT_ANSWER_<KIND>)",
    )
    solve.add_argument(
        "--answer-stdin",
        action="store_true",
        help="read the answer (one line) from standard input instead of "
        "prompting; it is sent as --kind, or as the challenge's one "
        "required type",
    )
    add_sandbox_options(solve)
    solve.set_defaults(run=run_solve)

    demo = subparsers.add_parser("demo", help="walk every flow and print a transcript")
    add_sandbox_options(demo)
    add_action_options(demo)
    add_allow_wrong_answers(demo)
    demo.set_defaults(run=run_demo)


__all__ = [
    "connect_for",
    "register",
    "run_authorize",
    "run_demo",
    "run_keys",
    "run_solve",
    "run_token",
    "subject_of",
]
