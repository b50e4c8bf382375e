"""``authzkit matrix --dialect authzen``: each subject's action x resource decisions, one
evaluations call per subject (:mod:`authzkit.shared.matrix.evaluations`), planned before
any call: from the sandbox world, or ``--subject``/``--actions``/``--resources`` and
``AUTHZKIT_SUBJECT_*``/``AUTHZKIT_RESOURCE_*`` on a PDP.
"""

from __future__ import annotations

import argparse
from typing import Any

from authzkit.shared.matrix.evaluations import (
    EvaluationsPlan,
    evaluations_matrices,
    plan_for_pdp,
    plan_from_world,
)
from authzkit.wire.spec import AUTHZEN


def plan(args: argparse.Namespace, settings: Any) -> EvaluationsPlan:
    """What is asked: the embedded sandbox's world's entities, or the PDP's given ones."""
    chosen = {"subject": args.subject, "actions": args.actions, "resources": args.resources}
    if settings.uses_sandbox:
        from authzkit.sandbox.authzen.world import AuthzenWorld

        return plan_from_world(AuthzenWorld.coerce(None).to_json(), **chosen)
    return plan_for_pdp(settings, **chosen)


def run_authzen_matrix(args: argparse.Namespace, settings: Any) -> int:
    """Plan (exit 2 naming what is wrong), announce, ask, print one table per subject."""
    from authzkit.cli.authzen import connect_in_dialect

    asked = plan(args, settings)
    print(asked.announce(), flush=True)
    with connect_in_dialect(args, settings, AUTHZEN) as connection:
        matrices = evaluations_matrices(connection.client, asked)
    for matrix in matrices:
        print(f"\n{matrix.text()}")
    return 0


__all__ = ["plan", "run_authzen_matrix"]
