"""``authzkit trace FLOW``: a flow written down for partner teams, exactly as it ran.

Markdown: a Mermaid sequence diagram, then each exchange with its curl, secrets as shell
variables; a wrong answer the consent rule forbids is a skipped step (docs/internals.md,
"Traces").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from authzkit.cli import pdp_trace
from authzkit.cli.commands import connect_for
from authzkit.client.exchanges import Exchange, Recorder
from authzkit.shared import trace
from authzkit.shared.connection import Connection
from authzkit.shared.flows import FLOW_ACTIONS, FlowRunner, Step, run_flow
from authzkit.shared.options import (
    add_action_options,
    add_allow_wrong_answers,
    add_sandbox_options,
    check_output_path,
    output_file_or_stdout,
)
from authzkit.shared.trace import Arrow
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DIALECTS, error_type
from authzkit.wire.version import __version__

# The OpenID Connect discovery document is the token host's (the issuer), like the token.
_PARTICIPANTS = {"token": "Token", "openid-configuration": "Token", "keys": "Discovery"}
_AUTHORIZE = "Authorization"


def _participant(exchange: Exchange) -> str:
    return _PARTICIPANTS.get(exchange.name, _AUTHORIZE)


def _message(exchange: Exchange) -> str:
    """A short label of a response for the diagram: status plus the service's type."""
    body = exchange.response_body
    kind = error_type(body)
    if kind is not None:
        return f"{exchange.status} {kind}"
    action = body.get("action") if isinstance(body, dict) else None
    if isinstance(action, dict) and action.get("status"):
        return f"{exchange.status} {action['status']}"
    return str(exchange.status or f"no answer ({exchange.error})")


def mermaid(exchanges: Sequence[Exchange]) -> str:
    """A Mermaid ``sequenceDiagram`` of the exchanges (resource server on the left)."""
    arrows = [
        Arrow(_participant(e), f"{e.method} {urlsplit(e.url).path}", _message(e)) for e in exchanges
    ]
    return trace.mermaid("Resource server (authzkit)", ("Token", "Discovery", _AUTHORIZE), arrows)


def render(
    flow: str, steps: Sequence[Step], exchanges: Sequence[Exchange], *, where: str
) -> trace.Trace:
    """The Markdown document of one traced flow (shown rendered in a notebook)."""
    out = [
        f"# Flow `{flow}`",
        "",
        f"Recorded by authzkit {__version__} against {where}. Secrets appear as shell "
        "variables (`$AUTHZKIT_CLIENT_SECRET`, `$ACCESS_TOKEN`, `$SUBJECT_TOKEN`, "
        "`$CHALLENGE_SOLUTION`, `$CLIENT_ASSERTION`, `$CLIENT_BASIC`): export them to replay "
        "a curl command.",
        "",
        *trace.steps_section(steps),
    ]
    skipped = [(n, s) for n, s in enumerate(steps, start=1) if s.skipped]
    if skipped:
        out += [""] + [f"Step {n} ({s.title}) {s.detail}." for n, s in skipped]
    out += ["", "## Sequence", "", "```mermaid", mermaid(exchanges), "```", "", "## Exchanges", ""]
    if not exchanges:
        out += ["No request was sent.", ""]
    for number, exchange in enumerate(exchanges, start=1):
        out += trace.exchange_section(number, exchange, str(exchange.status or "no answer"))
    return trace.Trace("\n".join(out))


def trace_flow(
    connection: Connection,
    flow: str,
    recorder: Recorder,
    *,
    allow_wrong_answers: bool | None = None,
) -> trace.Trace:
    """Run ``flow`` on ``connection`` (whose client records into ``recorder``); its Markdown.
    ``allow_wrong_answers`` is the ``--allow-wrong-answers`` consent (None: not given)."""
    return _traced(connection, flow, recorder, allow_wrong_answers)[0]


def _traced(
    connection: Connection, flow: str, recorder: Recorder, allow_wrong_answers: bool | None = None
) -> tuple[trace.Trace, list[Step]]:
    recorder.clear()
    runner = FlowRunner(connection, allow_wrong_answers=allow_wrong_answers)
    steps = list(run_flow(runner, flow))
    return render(flow, steps, recorder.exchanges, where=connection.where), steps


def _check_actions(args: argparse.Namespace) -> None:
    """Refuse an ``--action``/``--challenge-action`` the flow never sends: a value the
    user gave is used or refused, never silently dropped."""
    for kind, option, value in (
        ("plain", "--action", args.action),
        ("challenge", "--challenge-action", args.challenge_action),
    ):
        if value is not None and kind not in FLOW_ACTIONS[args.flow]:
            raise ConfigError(
                f"{option}: the {args.flow} flow sends no {kind} action (drop {option})"
            )


def run_trace(args: argparse.Namespace) -> int:
    """Write the trace; exit 1 (after writing it) when a step did not end as the flow
    expects, saying which and why on stderr (a step skipped on purpose gets one line too,
    and exit 0)."""
    settings = Settings.from_env()
    authzen = pdp_trace.on_authzen(args, settings)
    if not authzen:
        _check_actions(args)
    # The default name is refused like a given one: before the flow runs.
    out = args.out if args.out is not None else check_output_path(f"trace-{args.flow}.md")
    if authzen:
        document, steps = pdp_trace.trace_on_pdp(args, settings)
    else:
        recorder = Recorder()
        with connect_for(args, settings=settings, client_options={"recorder": recorder}) as c:
            document, steps = _traced(c, args.flow, recorder, args.allow_wrong_answers)
    _write(document, out)
    for number, step in enumerate(steps, start=1):
        if step.skipped:
            print(f"authzkit trace: step {number} ({step.title}) {step.detail}", file=sys.stderr)
    failed = [(n, step) for n, step in enumerate(steps, start=1) if not step.expected]
    for number, step in failed:
        why = f": {step.detail}" if step.detail else ""
        print(
            f"authzkit trace: step {number} ({step.title}) did not end as expected: "
            f"{step.outcome}{why}",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _write(document: str, out: Path | str) -> None:
    """Print (``-``) or write the document; ``out`` was checked writable before the flow
    ran (``--out`` while parsing, the default name in :func:`run_trace`)."""
    if out == "-":
        print(document)
        return
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document, encoding="utf-8")
    print(f"wrote {path}")


def register(subparsers: Any) -> None:
    """Add ``authzkit trace`` to the ``authzkit`` parser."""
    trace = subparsers.add_parser(
        "trace", help="run a named flow and write it as Markdown for partner teams"
    )
    trace.add_argument(
        "flow", choices=pdp_trace.ALL_FLOWS, help="which flow to run (docs/cli.md, docs/authzen.md)"
    )
    trace.add_argument(
        "--out",
        type=output_file_or_stdout,
        metavar="FILE",
        help="Markdown file to write (default trace-FLOW.md; - prints)",
    )
    add_sandbox_options(
        trace,
        dialect_help="what the service speaks: the draft (default), the provider's published "
        "API, or authzen (flows evaluation, evaluations, search, errors)",
        dialect_choices=DIALECTS,
    )
    add_action_options(trace)
    add_allow_wrong_answers(trace)
    trace.set_defaults(run=run_trace)


__all__ = ["mermaid", "register", "render", "run_trace", "trace_flow"]
