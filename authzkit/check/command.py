"""``authzkit check``: the conformance checker on the command line.

Exit 0 without a ``fail``, 1 with any, 2 on a configuration error or a refused
confirmation. On a real environment the planned request count is printed first; above
:data:`CONFIRM_ABOVE` it needs ``--yes`` or an interactive "y". On an AuthZEN PDP
(``--dialect authzen``, ``AUTHZKIT_DIALECT``, or its metadata at the URL) the rows are the
certification profile's and the interop corpora's (``--corpus``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from authzkit.check.authzen.corpora import INTEROP
from authzkit.shared.options import (
    add_action_options,
    add_allow_wrong_answers,
    add_dialect,
    output_file,
)
from authzkit.wire.actions import ACTIONS
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN, DIALECTS

if TYPE_CHECKING:
    from authzkit.check.results import CheckReport
    from authzkit.wire.config import Settings

CONFIRM_ABOVE = 50


def make_confirm(*, yes: bool, stdin: TextIO | None = None, out: TextIO | None = None) -> Any:
    """The ``confirm`` callback of the CLI: print the count, then ask when it is large.

    Without a terminal to ask, a large check is refused without printing anything: the
    refusal's one line (from :func:`authzkit.check.runner.run_checks`) names the count
    and ``--yes``."""

    def confirm(planned: int) -> bool:
        stream = out or sys.stderr
        source = stdin or sys.stdin
        if not (yes or planned <= CONFIRM_ABOVE or source.isatty()):
            return False
        print(
            f"authzkit check will send at most {planned} requests to the configured "
            f"environment (plain authorize calls and solutions, no load).",
            file=stream,
        )
        if yes or planned <= CONFIRM_ABOVE:
            return True
        print("Proceed? [y/N] ", end="", file=stream, flush=True)
        return source.readline().strip().lower() in ("y", "yes")

    return confirm


def speaks_authzen(args: Any, settings: Settings) -> bool:
    """Whether the check is AuthZEN's (as every command decides: see
    :func:`~authzkit.shared.connection.command_speaks_authzen`)."""
    from authzkit.shared.connection import command_speaks_authzen

    return command_speaks_authzen(args.dialect, settings)


def _draft_only(args: Any) -> list[str]:
    """The options of the draft and published rows that the command line gave."""
    given = [
        ("--action", args.action),
        ("--challenge-action", args.challenge_action),
        ("--allow-wrong-answers", args.allow_wrong_answers),
    ]
    return [option for option, value in given if value]


def run_authzen(args: Any, settings: Settings) -> CheckReport:
    """The AuthZEN report: the embedded sandboxes, or the PDP at ``AUTHZKIT_BASE_URL`` (a
    Bearer token only when a token method is configured)."""
    from authzkit.check.authzen.runner import run_authzen_checks

    draft = _draft_only(args)
    if draft:
        verb = "is" if len(draft) == 1 else "are"
        raise ConfigError(f"{', '.join(draft)} {verb} for the draft's rows, not authzen's")
    if settings.uses_sandbox:
        from authzkit.shared.extras import require

        require("sandbox", "authzkit check without AUTHZKIT_BASE_URL")
        return run_authzen_checks(corpora=args.corpus, only=args.only)

    def token() -> str:
        from authzkit.client.facade import AuthzClient

        with AuthzClient.from_env(settings, dialect=AUTHZEN) as client:
            return client.access_token()

    return run_authzen_checks(
        settings.require_base_url(),
        corpora=args.corpus,
        only=args.only,
        token=token if settings.client_id is not None else None,
        confirm=make_confirm(yes=args.yes),
        tls=settings.tls,
        timeout=settings.timeout,
    )


def run_draft(args: Any, settings: Settings) -> CheckReport:
    """The report of the draft's (or the published API's) rows."""
    from authzkit.check.runner import run_checks
    from authzkit.shared.extras import require
    from authzkit.shared.options import sandbox_options

    if args.corpus:
        raise ConfigError("--corpus applies to --dialect authzen (the AuthZEN interop corpora)")
    # --action/--challenge-action win over AUTHZKIT_PLAIN_ACTION/_CHALLENGE_ACTION.
    settings = settings.with_actions(plain=args.action, challenge=args.challenge_action)
    dialect = sandbox_options(args, settings)["dialect"]  # refused with AUTHZKIT_BASE_URL
    if settings.uses_sandbox:
        require("sandbox", "authzkit check without AUTHZKIT_BASE_URL")
    return run_checks(
        dialect=dialect,
        allow_wrong_answers=args.allow_wrong_answers,
        only=args.only,
        confirm=make_confirm(yes=args.yes),
        settings=settings,
    )


def run_check(args: Any) -> int:
    """Run the checks, print the table, write the files asked for; returns the exit code.

    Every output path was checked writable while the command line was parsed, so a bad
    ``--junit`` is refused before the first request, not after the last."""
    from authzkit.check import output
    from authzkit.wire.config import Settings

    settings = Settings.from_env()
    run = run_authzen if speaks_authzen(args, settings) else run_draft
    report = run(args, settings)
    print(output.terminal(report))
    if args.json:
        output.write_json(report, Path(args.json))
    if args.junit:
        Path(args.junit).write_text(output.junit(report), encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(output.markdown(report), encoding="utf-8")
    return report.exit_code


def register(subparsers: Any) -> None:
    """Add ``authzkit check`` to the ``authzkit`` parser (the shared options come from
    :mod:`authzkit.shared.options`)."""
    check = subparsers.add_parser(
        "check", help="which rows of SPEC hold on an environment (sandbox or real), with evidence"
    )
    add_dialect(
        check,
        help="what is checked: the draft's rows (default) or the published API's on the "
        "embedded sandbox (refused with AUTHZKIT_BASE_URL), or authzen: the AuthZEN "
        "certification profile and interop corpora, on the embedded AuthZEN sandbox or the "
        "PDP at AUTHZKIT_BASE_URL",
        choices=DIALECTS,
    )
    check.set_defaults(dialect=None)  # None: not given (see options.sandbox_options)
    for option, form in (
        ("--json", "the report as JSON"),
        ("--junit", "JUnit XML (one testcase per row)"),
        ("--markdown", "a Markdown table per section"),
    ):
        check.add_argument(option, type=output_file, metavar="FILE", help=f"write {form}")
    add_allow_wrong_answers(check)
    plain, challenge = (
        f"on a real environment: {kind.meaning} (default {kind.variable}); "
        f"the embedded sandbox uses its world's"
        for kind in ACTIONS.values()
    )
    add_action_options(check, plain_help=plain, challenge_help=challenge)
    check.add_argument(
        "--only", metavar="PATTERN", help="run only rows whose id matches (glob such as 'token.*')"
    )
    check.add_argument(
        "--corpus",
        action="append",
        choices=INTEROP,
        default=None,
        help="authzen: an interop corpus to run as rows (repeatable; default: on the embedded "
        "sandbox every corpus its worlds hold, on a PDP none: name the scenarios it is "
        "loaded with)",
    )
    check.add_argument(
        "--yes",
        action="store_true",
        help=f"do not ask before sending more than {CONFIRM_ABOVE} requests",
    )
    check.set_defaults(run=run_check)


__all__ = [
    "CONFIRM_ABOVE",
    "make_confirm",
    "register",
    "run_authzen",
    "run_check",
    "run_draft",
    "speaks_authzen",
]
