"""``authzkit matrix``: the policy matrix (:mod:`authzkit.shared.matrix`) on the command line."""

from __future__ import annotations

import argparse
from typing import Any

from authzkit.cli.commands import connect_for
from authzkit.shared.connection import command_speaks_authzen
from authzkit.shared.matrix import MatrixPlan, plan_matrix, run_plan
from authzkit.shared.options import add_sandbox_options
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError, TlsError
from authzkit.wire.spec import DIALECTS


def run_matrix(args: argparse.Namespace) -> int:
    """The command: plan (exit 2 naming what is missing), announce, ask, print the table.

    The plan is made before any authorize request: on the embedded sandbox against the
    world it will serve (the default one), so a bad ``--subject`` never starts a sandbox;
    on a configured service once it is known whether that is a sandbox (whose world then
    serves, as the embedded one's does)."""
    settings = Settings.from_env()
    if command_speaks_authzen(args.dialect, settings):
        from authzkit.cli.pdp_matrix import run_authzen_matrix

        return run_authzen_matrix(args, settings)
    plan: MatrixPlan | None
    if settings.uses_sandbox:
        from authzkit.sandbox.world import World

        plan = plan_matrix(
            settings,
            World.default().to_json(),
            subject=args.subject,
            actions=args.actions,
            resources=args.resources,
        )
        print(plan.announce(), flush=True)
        with connect_for(args, settings=settings) as connection:
            matrix = run_plan(connection, plan)
    else:
        plan = _real_or_sandbox_plan(args, settings)
        with connect_for(args, settings=settings) as connection:
            if connection.is_sandbox or plan is None:
                plan = plan_matrix(
                    settings,
                    connection.world() if connection.is_sandbox else None,
                    subject=args.subject,
                    actions=args.actions,
                    resources=args.resources,
                )
            print(plan.announce(), flush=True)
            matrix = run_plan(connection, plan)
    print(f"\n{matrix.text()}")
    return 0


def _real_or_sandbox_plan(args: argparse.Namespace, settings: Settings) -> MatrixPlan | None:
    """The plan for a configured service, checked before any authorize request: as a real
    environment's; if that lacks something, the service may be an authzkit sandbox (which
    needs none of it: one GET asks), else the real environment's error stands."""
    try:
        return plan_matrix(
            settings, None, subject=args.subject, actions=args.actions, resources=args.resources
        )
    except ConfigError:
        from authzkit.shared.connection import external_sandbox

        try:
            found = external_sandbox(settings)
        except TlsError:
            raise  # the service answered: what TLS said beats "a real environment needs"
        except AuthzError:
            found = None
        if found is None:
            raise
        found.stop()
        return None


def register(subparsers: Any) -> None:
    """Add ``authzkit matrix`` to the parser."""
    parser = subparsers.add_parser(
        "matrix", help="action x resource table of plain authorize outcomes (no solutions)"
    )
    parser.add_argument(
        "--subject",
        default=None,
        help="sandbox subject (default: the world's first subject that owns a resource); "
        "a real environment's subject is AUTHZKIT_SUBJECT_TOKEN's",
    )
    for option, what, variables in (
        ("--actions", "action names", "AUTHZKIT_PLAIN_ACTION / _CHALLENGE_ACTION"),
        ("--resources", "resource ids", "AUTHZKIT_RESOURCE_ID / _FOREIGN_RESOURCE_ID"),
    ):
        parser.add_argument(
            option,
            default=None,
            help=(
                f"comma-separated {what} (sandbox default: all of the world's; required on a "
                f"real environment unless {variables} are set)"
            ),
        )
    add_sandbox_options(
        parser,
        dialect_help="what the service speaks: the draft (default), the provider's published "
        "API, or authzen (each subject's decisions, one evaluations call per subject)",
        dialect_choices=DIALECTS,
    )
    parser.set_defaults(run=run_matrix)


__all__ = ["register", "run_matrix"]
