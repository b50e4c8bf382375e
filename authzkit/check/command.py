"""``authzkit check``: the conformance checker on the command line.

Exit 0 without a ``fail``, 1 with any, 2 on a configuration error or a refused
confirmation. On a real environment the planned request count is printed first; above
:data:`CONFIRM_ABOVE` it needs ``--yes`` or an interactive "y".
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from authzkit.shared.options import (
    add_action_options,
    add_allow_wrong_answers,
    add_dialect,
    output_file,
)
from authzkit.wire.actions import ACTIONS

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


def run_check(args: Any) -> int:
    """Run the checks, print the table, write the files asked for; returns the exit code.

    Every output path was checked writable while the command line was parsed, so a bad
    ``--junit`` is refused before the first request, not after the last."""
    from authzkit.check import output
    from authzkit.check.runner import run_checks
    from authzkit.shared.extras import require
    from authzkit.shared.options import sandbox_options
    from authzkit.wire.config import Settings

    # --action/--challenge-action win over AUTHZKIT_PLAIN_ACTION/_CHALLENGE_ACTION.
    settings = Settings.from_env().with_actions(plain=args.action, challenge=args.challenge_action)
    dialect = sandbox_options(args, settings)["dialect"]  # refused with AUTHZKIT_BASE_URL
    if settings.uses_sandbox:
        require("sandbox", "authzkit check without AUTHZKIT_BASE_URL")
    report = run_checks(
        dialect=dialect,
        allow_wrong_answers=args.allow_wrong_answers,
        only=args.only,
        confirm=make_confirm(yes=args.yes),
        settings=settings,
    )
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
    add_dialect(check, help="dialect of the embedded sandbox (refused with AUTHZKIT_BASE_URL)")
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
        "--yes",
        action="store_true",
        help=f"do not ask before sending more than {CONFIRM_ABOVE} requests",
    )
    check.set_defaults(run=run_check)


__all__ = ["CONFIRM_ABOVE", "make_confirm", "register", "run_check"]
