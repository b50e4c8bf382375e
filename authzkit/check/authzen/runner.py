"""Run the AuthZEN rows: the certification profile's on the PDP, and the interop corpora asked
for (``corpora``). Without a PDP URL each scenario runs on an embedded AuthZEN sandbox loaded
with its own world (the certification fixture, the todo scenario); a corpus no world holds is
refused, as is a corpus name that does not exist. A PDP that is not an authzkit sandbox gets
the planned request count to confirm first, as a real environment does."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from authzkit.check.authzen.corpora import CERTIFICATION, INTEROP
from authzkit.check.authzen.probe import TIMEOUT_S, AuthzenProbe
from authzkit.check.results import CheckReport, CheckRow, Evidence, Finding, RowSpec
from authzkit.check.rows.authzen import ROWS as CERTIFICATION_ROWS
from authzkit.check.rows.interop import ROWS as INTEROP_ROWS
from authzkit.client.exchanges import Recorder
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import AUTHZEN, SANDBOX_IDENTITY

if TYPE_CHECKING:
    from authzkit.wire.tls import TlsSettings

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


def planned_requests(groups: Mapping[str, Sequence[RowSpec]]) -> int:
    """An upper bound of the requests the rows send (the metadata GET included)."""
    return 1 + sum(spec.requests for specs in groups.values() for spec in specs)


def is_authzkit_sandbox(base_url: str, *, tls: TlsSettings | None, timeout: float) -> bool:
    """Whether the URL is an AuthZEN sandbox authzkit started (one GET; no answer at all is
    a :class:`~authzkit.wire.errors.TransportError` naming the URL)."""
    from authzkit.wire.identity import identify

    document = identify(base_url, timeout=timeout, tls=tls) or {}
    identity = document.get(SANDBOX_IDENTITY)
    return isinstance(identity, Mapping) and identity.get("dialect") == AUTHZEN


def run_authzen_checks(
    base_url: str | None = None,
    *,
    corpora: Sequence[str] | None = None,
    only: str | None = None,
    token: str | Callable[[], str] | None = None,
    confirm: Callable[[int], bool] | None = None,
    tls: TlsSettings | None = None,
    timeout: float = TIMEOUT_S,
) -> CheckReport:
    """The AuthZEN report of the PDP at ``base_url`` (or of embedded sandboxes).

    Bad ``corpora`` or ``only`` are refused before any request. On a PDP that is not an
    authzkit sandbox, ``confirm`` gets the planned request count first (``False``: a
    :class:`ConfigError`), then ``token`` (a callable is called once) is the Bearer token."""
    embedded = base_url is None
    groups = plan(corpora_of(corpora, sandbox=embedded), only)
    sandbox = embedded or is_authzkit_sandbox(base_url or "", tls=tls, timeout=timeout)
    planned = planned_requests(groups)
    if not sandbox and confirm is not None and not confirm(planned):
        raise ConfigError(
            f"not confirmed: the check would send at most {planned} requests to the PDP; "
            f"pass --yes to send them without asking"
        )
    bearer = token() if callable(token) else token
    rows: list[CheckRow] = []
    for name, specs in groups.items():
        recorder = Recorder(limit=None)
        with _target(base_url, name) as url:
            probe = AuthzenProbe(url, recorder=recorder, token=bearer, tls=tls, timeout=timeout)
            try:
                rows += [run_row(spec, probe) for spec in specs]
            finally:
                probe.close()
    target: dict[str, Any] = {
        "base_url": base_url or "embedded AuthZEN sandboxes",
        "dialect": AUTHZEN,
        "sandbox": sandbox,
        "real": not sandbox,
        "corpora": [n for n in groups if n != CERTIFICATION],
    }
    return CheckReport(target, rows)


@contextmanager
def _target(base_url: str | None, scenario: str) -> Iterator[str]:
    """The URL rows of ``scenario`` go to: ``base_url``, else an embedded sandbox serving
    the scenario's world (started and stopped here)."""
    if base_url is not None:
        yield base_url
        return
    from authzkit.sandbox import Sandbox

    with Sandbox(dialect=AUTHZEN, world=SANDBOX_WORLDS[scenario]) as sandbox:
        yield sandbox.base_url


__all__ = [
    "SANDBOX_WORLDS",
    "corpora_of",
    "is_authzkit_sandbox",
    "plan",
    "planned_requests",
    "run_authzen_checks",
    "run_row",
]
