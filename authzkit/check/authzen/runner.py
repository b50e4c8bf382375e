"""Run the AuthZEN rows: the certification profile's on the PDP, and the interop corpora asked
for (``corpora``). Without a PDP URL each scenario runs on an embedded AuthZEN sandbox loaded
with its own world (the certification fixture, the todo scenario); a corpus no world holds is
refused, as is a corpus name that does not exist."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from authzkit.check.authzen.corpora import CERTIFICATION, INTEROP
from authzkit.check.authzen.probe import AuthzenProbe
from authzkit.check.results import CheckReport, CheckRow, Evidence, Finding, RowSpec
from authzkit.check.rows.authzen import ROWS as CERTIFICATION_ROWS
from authzkit.check.rows.authzen_interop import ROWS as INTEROP_ROWS
from authzkit.client.recorder import Recorder
from authzkit.wire.errors import AuthzError, ConfigError

SANDBOX_WORLDS = {CERTIFICATION: "certification", "todo": "todo"}  # scenario -> its world


def corpora_of(names: Sequence[str] | None, *, sandbox: bool) -> tuple[str, ...]:
    """The interop corpora to run: ``names`` as given (each checked), else on the embedded
    sandbox every corpus one of its worlds holds, else none."""
    if names is None:
        return tuple(n for n in INTEROP if n in SANDBOX_WORLDS) if sandbox else ()
    for name in names:
        if name not in INTEROP:
            raise ConfigError(f"--corpus must be one of {', '.join(INTEROP)}, got {name!r}")
        if sandbox and name not in SANDBOX_WORLDS:
            raise ConfigError(
                f"--corpus {name}: no world of the embedded sandbox holds that scenario "
                f"(set AUTHZKIT_BASE_URL to a PDP that does)"
            )
    return tuple(dict.fromkeys(names))


def selected(rows: Sequence[RowSpec], only: str | None) -> list[RowSpec]:
    if only is None:
        return list(rows)
    if not only.strip():
        raise ConfigError("--only needs a pattern (a row id or a glob such as 'authzen.c-2-*')")
    glob = any(c in only for c in "*?[")
    return [r for r in rows if fnmatch.fnmatchcase(r.id, only) or (not glob and only in r.id)]


def plan(corpora: Sequence[str], only: str | None) -> dict[str, list[RowSpec]]:
    """Scenario -> its rows (the certification first), ``only`` applied; none left is refused."""
    groups = {CERTIFICATION: selected(CERTIFICATION_ROWS, only)}
    groups.update({name: selected(INTEROP_ROWS[name], only) for name in corpora})
    if not any(groups.values()):
        raise ConfigError(
            f"--only {only!r} matches no row; AuthZEN row ids look like authzen.c-2-2-1, "
            f"interop.todo.*"
        )
    return {name: rows for name, rows in groups.items() if rows}


def run_row(spec: RowSpec, probe: AuthzenProbe) -> CheckRow:
    start = len(probe.recorder)
    try:
        outcome = spec.check(probe)
    except AuthzError as exc:  # no answer at all
        outcome = Finding("fail", f"expected an answer; got {type(exc).__name__}: {exc}")
    return CheckRow(
        spec.id,
        spec.title,
        spec.spec,
        spec.section,
        outcome.verdict,
        outcome.detail,
        False,
        tuple(Evidence.from_exchange(e) for e in probe.recorder.exchanges[start:]),
    )


@contextmanager
def _sandbox(world: str) -> Iterator[str]:
    from importlib import resources

    from authzkit.sandbox import Sandbox

    path = resources.files("authzkit.sandbox.authzen").joinpath(f"worlds/{world}.json")
    with resources.as_file(path) as file, Sandbox(dialect="authzen", world=file) as sandbox:
        yield sandbox.base_url


def run_authzen_checks(
    base_url: str | None = None,
    *,
    corpora: Sequence[str] | None = None,
    only: str | None = None,
    token: str | None = None,
) -> CheckReport:
    """The AuthZEN report of the PDP at ``base_url`` (or of embedded sandboxes)."""
    sandbox = base_url is None
    groups = plan(corpora_of(corpora, sandbox=sandbox), only)
    rows: list[CheckRow] = []
    for name, specs in groups.items():
        recorder = Recorder(limit=None)
        with _target(base_url, name) as url:
            probe = AuthzenProbe(url, recorder=recorder, token=token)
            try:
                rows += [run_row(spec, probe) for spec in specs]
            finally:
                probe.close()
    target: dict[str, Any] = {
        "base_url": base_url or "embedded AuthZEN sandboxes",
        "dialect": "authzen",
        "sandbox": sandbox,
        "real": not sandbox,
        "corpora": [n for n in groups if n != CERTIFICATION],
    }
    return CheckReport(target, rows)


@contextmanager
def _target(base_url: str | None, scenario: str) -> Iterator[str]:
    if base_url is not None:
        yield base_url
        return
    with _sandbox(SANDBOX_WORLDS[scenario]) as url:
        yield url


__all__ = ["SANDBOX_WORLDS", "corpora_of", "plan", "run_authzen_checks", "run_row"]
