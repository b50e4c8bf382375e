"""``authzkit demo``: every flow against the service, printed as a readable transcript.

One line per request: step number, what was asked, the HTTP status, the outcome and the
milliseconds it took. The exit code is 0 only when every step ended as the flow expects. A
step skipped on purpose (a wrong answer on a real environment without consent, see
:mod:`authzkit.shared.consent`) is marked ``skipped (real environment)``, explained in one line
after the transcript, and does not fail the demo.
"""

from __future__ import annotations

from typing import TextIO

from authzkit.shared.connection import Connection
from authzkit.shared.flows import FlowRunner, Step

_HEADER = f"{'#':>2}  {'step':<44} {'HTTP':>4}  {'outcome':<40} {'ms':>8}"


def format_step(number: int, step: Step) -> str:
    """One transcript line; an unexpected outcome is flagged with ``!!``."""
    status = "-" if step.status is None else str(step.status)
    flag = "" if step.expected else "  !! unexpected"
    elapsed = f"{'-':>8}" if step.skipped else f"{step.elapsed_ms:>8.1f}"
    return f"{number:>2}  {step.title:<44} {status:>4}  {step.outcome:<40} {elapsed}{flag}"


def print_demo(
    connection: Connection, out: TextIO | None = None, *, allow_wrong_answers: bool | None = None
) -> int:
    """Run :meth:`FlowRunner.demo` and print each step as it completes.

    ``allow_wrong_answers``: the ``--allow-wrong-answers`` flag (None when not given).
    """
    import sys

    out = out or sys.stdout
    print(f"authzkit demo: every flow against {connection.where}", file=out)
    print(_HEADER, file=out)
    print("-" * len(_HEADER), file=out)
    unexpected = number = 0
    skipped: list[Step] = []
    runner = FlowRunner(connection, allow_wrong_answers=allow_wrong_answers)
    for number, step in enumerate(runner.demo(), start=1):
        print(format_step(number, step), file=out, flush=True)
        unexpected += not step.expected
        skipped += [step] if step.skipped else []
    print("-" * len(_HEADER), file=out)
    for reason in dict.fromkeys(step.detail for step in skipped):
        print(reason, file=out)
    if unexpected:
        print(f"{unexpected} step(s) did not end as expected", file=out)
        return 1
    sent = number - len(skipped)
    print(
        f"all {sent} steps ended as expected" + (f", {len(skipped)} skipped" if skipped else ""),
        file=out,
    )
    return 0


__all__ = ["format_step", "print_demo"]
