"""One run, one directory: where a load test or capacity search writes, held for its life.

Two runs sharing a folder would both lose their results, so a run claims its directory
before anything starts (an ``flock`` on :data:`LOCK_NAME`) and writes ``run.json`` with the
same keys for both commands (docs/internals.md, "One run, one directory").
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.shared.options import check_output_path
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.plan import RunPlan

DEFAULT_ROOT = Path("loadtest-out")  # git-ignored
LOCK_NAME = ".authzkit-run.lock"
FINISHED_MARK = "run.json"  # written when a run ends, interrupted or not
_HELD: dict[Path, tuple[int, bool]] = {}  # claimed directory -> (locked fd, made by claim)


def new_directory(name: str, root: Path | None = None) -> Path:
    """A directory made now for ``name`` under ``root`` (default ``loadtest-out/``), named
    ``name-<UTC time>``, or ``…-2``, ``…-3`` when that exists: ``mkdir`` decides, so two
    runs started in the same second never get the same one."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = (root if root is not None else DEFAULT_ROOT) / f"{name}-{stamp}"
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate.absolute()
    raise ConfigError(f"{base.parent}: no free name for {base.name}")  # pragma: no cover


def _lock(directory: Path, given: str) -> int:
    """An exclusive lock on ``directory``'s lock file, with this pid in it; a
    :class:`ConfigError` naming the live run's pid when another process holds it."""
    path = directory / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ConfigError(
                f"--out {given}: in use by a live run (pid {pid}); give another --out"
            ) from None
        if os.path.exists(path) and os.stat(path).st_ino == os.fstat(fd).st_ino:
            break  # else released and removed meanwhile: lock the file that is there now
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def _empty(directory: Path) -> None:
    """Remove what a finished run left in ``directory`` (not the lock just taken)."""
    for entry in directory.iterdir():
        if entry.name == LOCK_NAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def claim(out: Path | None, name: str, *, overwrite: bool = False) -> Path:
    """The run's directory, created and held by this process until :func:`release` or its
    end: ``out`` (``--out``), else a new one for ``name``. Refused with a
    :class:`ConfigError`, before anything starts, when a live run holds ``out`` or when it
    holds a finished run and ``overwrite`` is not given."""
    if out is None:
        directory, made = new_directory(name), True
        given = str(directory)
    else:
        directory = check_output_path(out, directory=True)
        given, made = str(out), not directory.exists()
        directory.mkdir(parents=True, exist_ok=True)
    fd = _lock(directory, given)
    if (directory / FINISHED_MARK).exists():
        if not overwrite:
            (directory / LOCK_NAME).unlink(missing_ok=True)
            os.close(fd)
            raise ConfigError(
                f"--out {given}: holds a finished run; give --overwrite to replace it, "
                "or another --out"
            )
        _empty(directory)
    _HELD[directory] = (fd, made)
    return directory


def release(directory: Path) -> None:
    """Let go of ``directory`` (its lock file goes); one that :func:`claim` made for a run
    that never wrote anything goes too."""
    held = _HELD.pop(directory, None)
    if held is None:
        return
    fd, made = held
    (directory / LOCK_NAME).unlink(missing_ok=True)
    os.close(fd)
    if made and not any(directory.iterdir()):
        directory.rmdir()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_json(plan: RunPlan) -> dict[str, Any]:
    """``run.json`` as a run starts: what was asked. ``command`` is the authzkit command
    (``loadtest`` or ``capacity``); the driver adds ``host``, ``preflight`` and
    ``locust_command`` (the child's argv, secrets never in it)."""
    load, sandbox = plan.load, plan.sandbox
    meta: dict[str, Any] = {
        "command": plan.command,
        "scenario": plan.scenario,
        "user_class": plan.user_class,
        "users": load.users,
    }
    if plan.command == "loadtest":
        meta.update(spawn_rate=load.spawn_rate, run_time=load.run_time, wait_time=load.wait_time)
    meta.update(
        processes=load.processes,
        rate=load.rate,
        arrivals=load.arrivals if load.rate else None,
        max_in_flight=load.max_in_flight,
        actions=plan.actions,
        sandbox=sandbox,
        sandbox_elsewhere=plan.elsewhere,  # its world supplied subjects or demo actions
        token_ttl=plan.token_ttl if sandbox else None,
        dialect=plan.dialect if sandbox or plan.evaluations else None,
        evaluations=None
        if plan.evaluations is None
        else {
            "batch": plan.evaluations.batch,
            "semantic": plan.evaluations.semantic if plan.evaluations.batch else None,
        },
        faults=plan.faults.given() if sandbox else None,
        started_at=_now(),
        tls=plan.settings.tls.record(),
        role="master" if plan.role.master else None,
        expect_workers=plan.role.expect_workers,
    )
    if plan.command == "loadtest":
        meta["soak"] = plan.soak
    return meta


def write_run_json(directory: Path, meta: dict[str, Any]) -> Path:
    """``run.json`` as the run ended (``finished_at`` added): the directory's finished mark."""
    meta["finished_at"] = _now()
    path = directory / FINISHED_MARK
    path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return path


__all__ = [
    "DEFAULT_ROOT",
    "LOCK_NAME",
    "claim",
    "new_directory",
    "release",
    "run_json",
    "write_run_json",
]
