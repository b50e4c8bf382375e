"""``run_checks``: connect (or take an environment), run the selected rows, keep evidence.

Rows that move time (sandbox only) run after the others and the transport rows last (they
read every exchange); the report lists rows in their stable order whatever the run order.
On a real environment the planned request count goes to ``confirm`` before any request.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Sequence
from typing import Any

from authzkit.check.probe import Probe
from authzkit.check.results import CheckReport, CheckRow, Evidence, Finding, RowSpec, Skip
from authzkit.check.rows.authorize import ROWS as AUTHORIZE_ROWS
from authzkit.check.rows.challenge import ROWS as CHALLENGE_ROWS
from authzkit.check.rows.errors import ROWS as ERROR_ROWS
from authzkit.check.rows.keys import ROWS as KEY_ROWS
from authzkit.check.rows.token import ROWS as TOKEN_ROWS
from authzkit.check.rows.transport import ROWS as TRANSPORT_ROWS
from authzkit.client.exchanges import Recorder
from authzkit.shared.connection import Connection, connect
from authzkit.wire.clock import ManualClock
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import DIALECTS

log = logging.getLogger(__name__)

ROWS: tuple[RowSpec, ...] = (
    *TOKEN_ROWS,
    *KEY_ROWS,
    *AUTHORIZE_ROWS,
    *CHALLENGE_ROWS,
    *ERROR_ROWS,
    *TRANSPORT_ROWS,
)
ROW_IDS = tuple(row.id for row in ROWS)
TIME_ROWS = ("token.lifetime_honoured", "challenge.expiry", "access_token.expired")
LAST_ROWS = ("transport.https", "transport.correlation_id", "transport.timeouts")
BASE_REQUESTS = 2  # the client's token call and the discovery document
SANDBOX_KEY_SIZE = 2048
# The checked sandbox's token lifetime: short enough that its refresh margin (a quarter)
# stays under a client assertion's 60 s, so access_token.expired can lag the client's clock.
SANDBOX_TOKEN_TTL = 120


def select(only: str | None) -> list[RowSpec]:
    """The rows whose id matches ``only`` (fnmatch glob, or a plain substring); a blank
    pattern is refused rather than read as "every row"."""
    if only is None:
        return list(ROWS)
    if not only.strip():
        raise ConfigError("--only needs a pattern (a row id or a glob such as 'token.*')")
    chosen = [
        r
        for r in ROWS
        if fnmatch.fnmatchcase(r.id, only) or (not any(c in only for c in "*?[") and only in r.id)
    ]
    if not chosen:
        raise ConfigError(
            f"--only {only!r} matches no row; row ids look like token.fields, challenge.*"
        )
    return chosen


def planned_requests(rows: Sequence[RowSpec]) -> int:
    """An upper bound of the requests the rows send (shown before a real run starts)."""
    return BASE_REQUESTS + sum(row.requests for row in rows)


def _run_row(spec: RowSpec, probe: Probe) -> CheckRow:
    start = len(probe.recorder)
    try:
        outcome = spec.check(probe)
    except Skip as skip:
        outcome = Finding("skip", skip.reason)
    except AuthzError as exc:  # no answer at all (a timeout, a refused connection)
        outcome = Finding("fail", f"expected an answer; got {type(exc).__name__}: {exc}")
    seen = list(outcome.exchanges)
    seen += [e for e in probe.recorder.exchanges[start:] if e not in seen]
    return CheckRow(
        spec.id,
        spec.title,
        spec.spec,
        spec.section,
        outcome.verdict,
        outcome.detail,
        spec.security,
        tuple(Evidence.from_exchange(e) for e in seen),
    )


def _target(connection: Connection, dialect: str) -> dict[str, Any]:
    provider = connection.client.token_provider
    return {
        "base_url": connection.client.base_url,
        "auth_url": connection.client.auth_url,
        "token_url": provider.token_url,
        "issuer": provider.issuer,
        # A sandbox says which dialect it speaks (one started elsewhere too).
        "dialect": str(getattr(connection.sandbox, "dialect", dialect))
        if connection.is_sandbox
        else "detected",
        "sandbox": connection.is_sandbox,
        "real": not connection.is_sandbox,
    }


def run_on(
    connection: Connection,
    rows: Sequence[RowSpec],
    *,
    recorder: Recorder,
    allow_wrong_answers: bool | None = None,
    clocks: tuple[ManualClock, ManualClock] | None = None,
    dialect: str = "draft",
) -> CheckReport:
    """Run ``rows`` on an open environment whose client records into ``recorder``."""
    probe = Probe(
        connection, recorder=recorder, allow_wrong_answers=allow_wrong_answers, clocks=clocks
    )
    order = sorted(rows, key=lambda r: (r.id in LAST_ROWS, r.id in TIME_ROWS))
    done = {spec.id: _run_row(spec, probe) for spec in order}
    for row in done.values():
        log.debug("check %s: %s", row.id, row.verdict)
    return CheckReport(_target(connection, dialect), [done[r.id] for r in rows])


def run_checks(
    connection: Connection | None = None,
    *,
    dialect: str = "draft",
    allow_wrong_answers: bool | None = None,
    only: str | None = None,
    settings: Settings | None = None,
    confirm: Callable[[int], bool] | None = None,
) -> CheckReport:
    """Check which rows of SPEC hold on ``connection`` (or on the configured environment, or on an
    embedded sandbox of ``dialect`` started and stopped here).

    A real environment gets plain authorize calls and solutions only, ``confirm`` is asked
    with the planned request count first (``False`` → :class:`ConfigError`), and no wrong
    answer is sent unless ``allow_wrong_answers``.
    """
    if dialect not in DIALECTS:
        raise ConfigError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
    rows = select(only)
    if connection is not None:
        recorder = connection.client.recorder
        if recorder is None:
            raise ConfigError(
                "run_checks(connection) needs a client made with a Recorder "
                "(client_options={'recorder': Recorder()})"
            )
        _confirm(connection, rows, confirm)
        return run_on(
            connection,
            rows,
            recorder=recorder,
            allow_wrong_answers=allow_wrong_answers,
            dialect=dialect,
        )
    settings = settings if settings is not None else Settings.from_env()
    recorder = Recorder(limit=None)
    clocks = (ManualClock(), ManualClock()) if settings.uses_sandbox else None
    options: dict[str, Any] = {"recorder": recorder}
    sandbox_options: dict[str, Any] = {}
    if clocks is not None:
        options["clock"] = clocks[1]
        sandbox_options = {
            "clock": clocks[0],
            "key_size": SANDBOX_KEY_SIZE,
            "token_ttl": SANDBOX_TOKEN_TTL,
            "dialect": dialect,
        }
    # connect() asks a configured service once whether it is a sandbox (one GET, no
    # token yet): a sandbox started elsewhere is checked like the embedded one, without
    # the count a real environment confirms first.
    with connect(settings, client_options=options, **sandbox_options) as connection:
        _confirm(connection, rows, confirm)
        return run_on(
            connection,
            rows,
            recorder=recorder,
            allow_wrong_answers=allow_wrong_answers,
            clocks=clocks,
            dialect=dialect,
        )


def _confirm(
    connection: Connection, rows: Sequence[RowSpec], confirm: Callable[[int], bool] | None
) -> None:
    if not connection.is_sandbox:
        _confirm_real(rows, confirm)


def _confirm_real(rows: Sequence[RowSpec], confirm: Callable[[int], bool] | None) -> None:
    planned = planned_requests(rows)
    if confirm is not None and not confirm(planned):
        raise ConfigError(
            f"not confirmed: the check would send at most {planned} requests "
            f"to the configured environment; pass --yes to send them without "
            f"asking"
        )


__all__ = [
    "LAST_ROWS",
    "ROWS",
    "ROW_IDS",
    "TIME_ROWS",
    "planned_requests",
    "run_checks",
    "run_on",
    "select",
]
