"""The two roles of a run spread over machines: ``--master`` and ``--worker``.

Each role checks what it needs before anything starts; both need ``AUTHZKIT_BASE_URL``, and
the master plans the run and forwards its options to every worker (docs/internals.md, "A
run over several machines").
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from authzkit.shared import options
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError

DEFAULT_MASTER_PORT = 5557  # Locust's
DEFAULT_MAX_WAIT_S = 60.0
GAVE_UP = 3  # the master's exit code when its workers did not all connect in time
GAVE_UP_LOG = "Gave up waiting for workers to connect"  # what Locust logs then


def add_role_arguments(run: Any) -> None:
    """``--master``/``--worker`` and what each needs."""
    group = run.add_argument_group(
        "distributed run (one master, workers on other machines; see "
        "'Running beyond one machine' in the docs)"
    )
    group.add_argument(
        "--master",
        action="store_true",
        help="coordinate workers started elsewhere: sends nothing itself, writes the run "
        "directory, exits with the threshold verdict (needs --expect-workers)",
    )
    group.add_argument(
        "--worker",
        action="store_true",
        help="send load for the master at --master-host (needs AUTHZKIT_BASE_URL)",
    )
    group.add_argument(
        "--expect-workers",
        type=options.count(1),
        default=None,
        metavar="N",
        help="with --master: start once N workers are connected",
    )
    group.add_argument(
        "--expect-workers-max-wait",
        type=options.number(above=0, what="seconds"),
        default=DEFAULT_MAX_WAIT_S,
        metavar="S",
        help=f"with --master: give up (exit {GAVE_UP}) when the workers are not all "
        f"connected after S seconds (default {DEFAULT_MAX_WAIT_S:g})",
    )
    group.add_argument(
        "--master-host",
        default=None,
        metavar="HOST",
        help="with --worker: the master's host name or address",
    )
    group.add_argument(
        "--master-port",
        type=options.count(1, maximum=65535),
        default=DEFAULT_MASTER_PORT,
        metavar="PORT",
        help=f"the master's port: where it listens, where workers connect "
        f"(default {DEFAULT_MASTER_PORT})",
    )
    group.add_argument(
        "--master-bind-host",
        default="*",
        metavar="ADDRESS",
        help="with --master: the interface to listen on (default: all)",
    )


@dataclass(frozen=True)
class Role:
    """The role of this process in a run, with what it needs: ``name`` is ``"master"``,
    ``"worker"`` or None (a run on this machine)."""

    name: str | None = None
    expect_workers: int | None = None
    expect_workers_max_wait: float = DEFAULT_MAX_WAIT_S
    master_host: str | None = None
    master_port: int = DEFAULT_MASTER_PORT
    master_bind_host: str = "*"

    @property
    def master(self) -> bool:
        return self.name == "master"

    @property
    def worker(self) -> bool:
        return self.name == "worker"

    @property
    def waits(self) -> float:
        """The seconds a master may wait for its workers before the load starts."""
        return self.expect_workers_max_wait if self.master else 0.0


def role(args: argparse.Namespace) -> str | None:
    """``"master"``, ``"worker"`` or None (a run on this machine)."""
    if getattr(args, "master", False):
        return "master"
    return "worker" if getattr(args, "worker", False) else None


def _refuse_mismatch(args: argparse.Namespace) -> None:
    if args.master and args.worker:
        raise ConfigError("--master and --worker: a process plays one role; start one of each")
    if args.expect_workers is not None and not args.master:
        raise ConfigError("--expect-workers needs --master")
    if args.master and args.expect_workers is None:
        raise ConfigError("--master needs --expect-workers N: the workers it waits for")
    if args.master_host is not None and not args.worker:
        raise ConfigError("--master-host needs --worker")
    if args.master_bind_host != "*" and not args.master:
        raise ConfigError("--master-bind-host needs --master")
    if args.worker and not args.master_host:
        raise ConfigError("--worker needs --master-host HOST: where the master listens")
    if role(args) and args.processes is not None:
        raise ConfigError(
            f"--processes with --{role(args)}: --processes runs master and workers on this "
            f"machine; across machines start one --master and --worker processes instead"
        )


def check_role(args: argparse.Namespace, environ: dict[str, str] | None = None) -> Role:
    """The :class:`Role`, once its options agree and ``AUTHZKIT_*`` names a service every
    process can reach; a :class:`ConfigError` naming what is wrong otherwise."""
    _refuse_mismatch(args)
    found = Role(
        role(args),
        args.expect_workers,
        args.expect_workers_max_wait,
        args.master_host,
        args.master_port,
        args.master_bind_host,
    )
    if found.name is None:
        return found
    settings = Settings.from_env(environ)  # a partial set of credentials is named here
    if settings.base_url is None:
        raise ConfigError(
            f"--{found.name} needs AUTHZKIT_BASE_URL: every process of a distributed run "
            f"must reach the same service (a sandbox started by one process is out of the "
            f"others' reach; start `authzkit sandbox --host 0.0.0.0` and point at it)"
        )
    if found.worker and args.subjects is not None:
        from authzkit.loadtest.record.face import subjects_from_csv

        subjects_from_csv(args.subjects)  # readable, with its columns: named when not
    return found


def role_options(role: Role) -> list[str]:
    """Locust's options of the role: listening and waiting, or connecting."""
    if role.master:
        return [
            "--master",
            "--expect-workers",
            str(role.expect_workers),
            "--expect-workers-max-wait",
            f"{role.expect_workers_max_wait:g}",
            "--master-bind-host",
            role.master_bind_host,
            "--master-bind-port",
            str(role.master_port),
        ]
    if role.worker:
        return [
            "--worker",
            "--master-host",
            str(role.master_host),
            "--master-port",
            str(role.master_port),
        ]
    return []


def master_lost_message(role: Role) -> str:
    """The one line of a worker whose master went away mid-run (exit ``MASTER_LOST``)."""
    from authzkit.loadtest.record.face import MASTER_LOST, MASTER_SILENT_S

    return (
        f"lost the master at {role.master_host}:{role.master_port}: no heartbeat for "
        f"{MASTER_SILENT_S:g} s (the master stopped or its machine is gone); this worker "
        f"stopped its users and exits {MASTER_LOST}"
    )


def gave_up_message(role: Role, connected: int) -> str:
    """The one line of a master whose workers did not all come."""
    return (
        f"gave up after {role.expect_workers_max_wait:g} s waiting for workers: "
        f"{connected} of {role.expect_workers} connected (--expect-workers "
        f"{role.expect_workers}); no load was sent. A worker that exits at start names "
        f"what it lacks (AUTHZKIT_*, the subjects file) in its own output"
    )


__all__ = [
    "DEFAULT_MASTER_PORT",
    "DEFAULT_MAX_WAIT_S",
    "GAVE_UP",
    "GAVE_UP_LOG",
    "Role",
    "add_role_arguments",
    "check_role",
    "gave_up_message",
    "master_lost_message",
    "role",
    "role_options",
]
