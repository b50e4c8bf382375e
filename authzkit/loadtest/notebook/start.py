"""``run(...)``: ``authzkit loadtest`` from a notebook, with its live view.

The keywords are checked by the command's own options (:mod:`.keywords`) and by the command
itself before it starts anything (its refusal is raised here as the
:class:`~authzkit.wire.errors.ConfigError` it printed); then the run goes on in the child
(:mod:`.background`) while the kernel shows it (:mod:`.live`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from authzkit.loadtest.notebook.handle import Run

STARTING_S = 120.0  # at most, for the command's checks (the extra, after --, the plan)


def _seconds(args: Any) -> float:
    from authzkit.loadtest.soak import SOAK_RUN_TIME
    from authzkit.shared.options import run_time_seconds

    soak_default = args.soak and not getattr(args, "run_time_given", False)
    return run_time_seconds(SOAK_RUN_TIME if soak_default else args.run_time)


def _checked_by_the_command(child: Any) -> None:
    """Wait for the command's own checks: they end with the run's locustfile written, or
    with exit 2 and the reason (raised here)."""
    deadline = time.monotonic() + STARTING_S
    while child.running and not (child.out / "locustfile.py").exists():
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not child.running:
        child.wait()
        refused = child.refused()
        if refused is not None:
            child.close()
            raise refused


def _watch(found: Run, view: Any) -> None:
    """The thread of a run that does not block: the figures each interval, and in a page
    the run's display at its end."""
    from authzkit.loadtest.notebook.live import WidgetView
    from authzkit.wire import html as h

    try:
        found._follow(view)
        refused = found._child.refused() if found._child is not None else None
        if refused is not None:
            raise refused
        if isinstance(view, WidgetView):  # lines say nothing more: the caller shows it
            view.finish(found._repr_html_())
    except Exception as exc:  # shown in the cell, raised by wait()
        found.error = exc
        view.finish(str(h.card("load test", h.badge("error", "bad"), h.pre(exc), tone="bad")))


def run(
    *,
    wait: bool | None = None,
    sandbox: bool = False,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Run:
    """Run ``authzkit loadtest`` with ``options`` (its options' names with ``_``:
    ``users=4, run_time="3s", scenario="challenge", max_failure_ratio=0``; ``locust_args``
    for what goes after ``--``) in a child process, and return its :class:`Run`.

    Under a frontend (JupyterLab, Notebook, VS Code, Voila) the call returns at once: the
    cell shows the live view (elapsed and remaining time, requests/s, p50 and p99 of the
    last seconds, failures) with a Stop button, which becomes the run's display at its end;
    reading the run waits for that end. Elsewhere (nbval, ``nbconvert --execute``, a script)
    it prints a line per interval and returns once the run has ended; the kernel's
    interrupt (Ctrl-C) stops the run as Stop does. ``wait=True`` or ``False`` chooses
    (``False`` without a page: the lines come from a thread, and :meth:`Run.wait` waits).
    A run still going when the process exits (a kernel shut down) is stopped as Stop does.

    ``sandbox=True`` leaves this kernel's ``AUTHZKIT_*`` variables out, so the command
    starts a sandbox of its own; ``env`` adds variables to the command's environment.
    A keyword or value the command would refuse raises :class:`ConfigError` before
    anything starts."""
    from authzkit.loadtest.arguments import require_extra
    from authzkit.loadtest.notebook.background import Child, child_environment, default_out
    from authzkit.loadtest.notebook.keywords import command_line
    from authzkit.loadtest.notebook.live import TextView, WidgetView, has_frontend

    argv, args = command_line(options)
    require_extra("loadtest")
    seconds = _seconds(args)
    out = Path(args.out) if args.out is not None else default_out(args.scenario)
    child = Child(argv, out.absolute(), child_environment(sandbox, env), seconds)
    _checked_by_the_command(child)
    found = Run(child.out, child)
    frontend = has_frontend()
    if not frontend if wait is None else wait:
        found._follow(TextView(seconds))
        refused = child.refused()
        if refused is not None:
            raise refused
        return found
    view: TextView | WidgetView = TextView(seconds)  # wait=False without a page: lines
    if frontend:
        title = f"load test · {args.scenario} · {args.run_time}"
        text = f"{found!r}: its live view needs ipywidgets; .stop() ends it, .wait() waits"
        view = WidgetView(title, seconds, found.stop, text)
        view.show()
    found._watcher = threading.Thread(target=_watch, args=(found, view), daemon=True)
    found._watcher.start()
    return found


__all__ = ["run"]
