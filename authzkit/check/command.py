"""``authzkit check``: the conformance checker on the command line.

Exit 0 without a ``fail``, 1 with any, 2 on a configuration error or a refused
confirmation. On a real environment the planned request count is printed first; above
:data:`CONFIRM_ABOVE` it needs ``--yes`` or an interactive "y".
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from authzkit.config import ACTIONS
from authzkit.errors import ConfigError
from authzkit.spec import DIALECTS

CONFIRM_ABOVE = 50


def make_confirm(*, yes: bool, stdin: TextIO | None = None, out: TextIO | None = None) -> Any:
    """The ``confirm`` callback of the CLI: print the count, then ask when it is large."""
    def confirm(planned: int) -> bool:
        stream = out or sys.stderr
        print(f"authzkit check will send at most {planned} requests to the configured "
              f"environment (plain authorize calls and solutions, no load).", file=stream)
        if yes or planned <= CONFIRM_ABOVE:
            return True
        source = stdin or sys.stdin
        if not source.isatty():
            print(f"more than {CONFIRM_ABOVE} requests: pass --yes to confirm "
                  f"(no terminal to ask)", file=stream)
            return False
        print("Proceed? [y/N] ", end="", file=stream, flush=True)
        return source.readline().strip().lower() in ("y", "yes")
    return confirm


def run_check(args: Any) -> int:
    """Run the checks, print the table, write the files asked for; returns the exit code."""
    from authzkit.check import output
    from authzkit.check.runner import run_checks
    from authzkit.config import Settings

    try:
        # --action/--challenge-action win over AUTHZKIT_PLAIN_ACTION/_CHALLENGE_ACTION.
        settings = Settings.from_env().with_actions(plain=args.action,
                                                    challenge=args.challenge_action)
        report = run_checks(dialect=args.dialect, allow_wrong_answers=args.allow_wrong_answers,
                            only=args.only, confirm=make_confirm(yes=args.yes),
                            settings=settings)
    except ConfigError as exc:
        print(f"authzkit check: {exc}", file=sys.stderr)
        return 2
    print(output.terminal(report))
    if args.json:
        output.write_json(report, Path(args.json))
    if args.junit:
        Path(args.junit).write_text(output.junit(report), encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(output.markdown(report), encoding="utf-8")
    return report.exit_code


def register(subparsers: Any) -> None:
    """Add ``authzkit check`` to the ``authzkit`` parser."""
    check = subparsers.add_parser(
        "check", help="which rows of SPEC hold on an environment (sandbox or real), "
                      "with evidence")
    check.add_argument("--dialect", choices=DIALECTS, default="draft",
                       help="dialect of the embedded sandbox (without AUTHZKIT_BASE_URL)")
    check.add_argument("--json", metavar="FILE", help="write the report as JSON")
    check.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per row)")
    check.add_argument("--markdown", metavar="FILE", help="write a Markdown table per section")
    check.add_argument("--allow-wrong-answers", action="store_true",
                       help="on a real environment, send one wrong answer "
                            "(errors.bad_challenge_solution; a PIN counter may lock out)")
    for kind in ACTIONS.values():
        check.add_argument(kind.option, default=None, metavar="NAME",
                           help=f"on a real environment: {kind.meaning} (default "
                                f"{kind.variable}); the embedded sandbox uses its world's")
    check.add_argument("--only", metavar="PATTERN",
                       help="run only rows whose id matches (glob such as 'token.*')")
    check.add_argument("--yes", action="store_true",
                       help=f"do not ask before sending more than {CONFIRM_ABOVE} requests")
    check.set_defaults(run=run_check)


__all__ = ["CONFIRM_ABOVE", "make_confirm", "register", "run_check"]
