"""A load run on the AuthZEN dialect, from the command's side: ``--batch``/``--semantic``,
what is checked of them and of the dialect before anything starts (the scenario, the
draft's options that have no meaning there), and the preflight that asks the PDP one
evaluation (or one batch) before any load. The calls themselves are
:mod:`authzkit.loadtest.record.evaluations`'.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from authzkit.shared import options
from authzkit.wire.authzen import DEFAULT_SEMANTIC, SEMANTICS
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import AUTHZEN

AUTHZEN_SCENARIOS = ("authorize",)  # one evaluation (or one batch) per call


@dataclass(frozen=True)
class Evaluations:
    """What each call of an AuthZEN run sends: one evaluation, or ``batch`` of them."""

    batch: int | None = None  # None: POST /access/v1/evaluation
    semantic: str = DEFAULT_SEMANTIC

    @property
    def row(self) -> str:
        """The calls' row: ``POST evaluation`` or ``POST evaluations``."""
        return "evaluation" if self.batch is None else "evaluations"

    def locust_options(self) -> list[str]:
        """The Locust process's options for these calls."""
        found = ["--dialect", AUTHZEN]
        if self.batch is not None:
            found += ["--batch", str(self.batch), "--semantic", self.semantic]
        return found


def add_evaluation_options(run: Any) -> None:
    """``--batch`` and ``--semantic``: what each call of an AuthZEN run sends."""
    run.add_argument(
        "--batch",
        type=options.count(1),
        default=None,
        metavar="N",
        help="with --dialect authzen: N evaluations per call to /access/v1/evaluations "
        "(default: one evaluation per call to /access/v1/evaluation)",
    )
    run.add_argument(
        "--semantic",
        choices=SEMANTICS,
        default=None,
        help=f"with --batch: the evaluations semantic (default {DEFAULT_SEMANTIC})",
    )


def run_dialect(given: argparse.Namespace, settings: Settings) -> str:
    """The dialect of the run: ``authzen`` when ``--dialect`` or ``AUTHZKIT_DIALECT`` says
    so, or at a URL alone that publishes AuthZEN metadata (as every command decides:
    :func:`~authzkit.shared.connection.command_speaks_authzen`); else ``--dialect`` (what
    the sandbox started here speaks)."""
    if settings.uses_sandbox:
        return AUTHZEN if AUTHZEN in (given.dialect, settings.dialect) else str(given.dialect)
    from authzkit.shared.connection import command_speaks_authzen

    explicit = AUTHZEN if given.dialect == AUTHZEN else None  # the draft's two: the default
    return AUTHZEN if command_speaks_authzen(explicit, settings) else str(given.dialect)


def check_evaluations(given: argparse.Namespace, dialect: str) -> Evaluations | None:
    """The calls of an AuthZEN run, checked with the options that mean nothing there
    (refused in one line each); None for another dialect, where ``--batch`` and
    ``--semantic`` are refused."""
    batch, semantic = getattr(given, "batch", None), getattr(given, "semantic", None)
    if dialect != AUTHZEN:
        for option, value in (("--batch", batch), ("--semantic", semantic)):
            if value is not None:
                raise ConfigError(
                    f"{option}: batches of evaluations are AuthZEN's (--dialect authzen); "
                    f"the {dialect} dialect sends one authorize per call"
                )
        return None
    if given.scenario not in AUTHZEN_SCENARIOS:
        raise ConfigError(
            f"--scenario {given.scenario}: an AuthZEN PDP has no such flow (its calls are "
            f"evaluations: --scenario authorize, with --batch N for many per call)"
        )
    if semantic is not None and batch is None:
        raise ConfigError("--semantic needs --batch N: one evaluation has no semantic")
    if getattr(given, "subjects", None) is not None:
        raise ConfigError(
            "--subjects: subject tokens are the draft's; an AuthZEN load test asks about "
            "the sandbox world's entities, or AUTHZKIT_SUBJECT_* and AUTHZKIT_RESOURCE_*"
        )
    if getattr(given, "token_ttl", None) is not None:
        raise ConfigError("--token-ttl: an AuthZEN sandbox has no token endpoint")
    from authzkit.sandbox.authzen.embedded import NOT_ON_AUTHZEN

    for name, why in NOT_ON_AUTHZEN.items():
        if getattr(given, name, None):
            raise ConfigError(f"--{name.replace('_', '-')} does not apply to AuthZEN: {why}")
    return Evaluations(batch, semantic or DEFAULT_SEMANTIC)


def check_pdp(settings: Settings, action: str | None) -> bool:
    """Against a PDP at ``AUTHZKIT_BASE_URL``: whether its evaluations come from an
    authzkit AuthZEN sandbox's world (asked once), else those ``AUTHZKIT_SUBJECT_*``/
    ``RESOURCE_*`` and the action name (a :class:`ConfigError` when one is missing)."""
    from authzkit.loadtest.record.face import load_requests

    return load_requests(settings, str(settings.base_url), action)[1]


def preflight(
    settings: Settings, host: str, action: str | None, calls: Evaluations
) -> dict[str, Any]:
    """Ask the PDP what the users' first call asks (one evaluation, or one batch; with a
    Bearer token when a token method is configured, got as the users get theirs) and say
    what it answered; a :class:`ConfigError` when it gave no decision (no load then)."""
    from authzkit.client.facade import AuthzClient
    from authzkit.loadtest.record.face import configured_token_provider, load_requests

    found, _ = load_requests(settings, host, action)
    client = AuthzClient(
        base_url=host,
        dialect=AUTHZEN,
        timeout=settings.timeout,
        tls=settings.tls,
        token_provider=configured_token_provider(None, settings, host),
    )
    try:
        if calls.batch is None:
            first = found[0]
            outcomes = [
                client.evaluate(
                    first["action"], subject=first["subject"], resource=first["resource"]
                )
            ]
        else:
            items = [found[i % len(found)] for i in range(calls.batch)]
            outcomes = client.evaluations(items, semantic=calls.semantic)
    except AuthzError as exc:
        raise ConfigError(
            f"preflight: the PDP at {host} gave no decision to the first {calls.row}: {exc}"
        ) from None
    finally:
        client.close()
    said = ", ".join("authorized" if o.authorized else "denied" for o in outcomes)
    print(f"preflight: the PDP answered the first {calls.row}: {said}", flush=True)
    return {"ran": True, "requests": 1, "decisions": said.split(", ")}


__all__ = [
    "AUTHZEN_SCENARIOS",
    "Evaluations",
    "add_evaluation_options",
    "check_evaluations",
    "check_pdp",
    "preflight",
    "run_dialect",
]
