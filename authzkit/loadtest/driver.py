"""Driving a run's Locust child: start, run, stop, one way for ``loadtest`` and ``capacity``.

:class:`LocustRun` starts the sandbox a plan asks for, runs the preflight, starts Locust
into the run directory and, whatever happens, stops Locust, the sandbox and the temporary
folders. :func:`run_worker` runs a ``--worker``'s Locust. Locust is never imported here:
it runs as ``python -m`` in a child process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.child import OUTPUT_FILE
from authzkit.wire.errors import ConfigError

if TYPE_CHECKING:
    from authzkit.loadtest.plan import RunPlan
    from authzkit.loadtest.resources import Watch
    from authzkit.sandbox.process import SandboxProcess


def write_locustfile(out: Path, *user_classes: str) -> Path:
    """The locustfile of the run, importing its user classes from authzkit itself."""
    from authzkit.loadtest.record.face import locustfile_text

    out.mkdir(parents=True, exist_ok=True)
    locustfile = out / "locustfile.py"
    locustfile.write_text(locustfile_text(*user_classes), encoding="utf-8")
    return locustfile


def start_locust(
    command: list[str], env: dict[str, str], cwd: Path, output: Path | None = None
) -> subprocess.Popen[bytes]:
    """Locust as a child of this process, started in ``cwd``, printing into ``output``
    (None: this process's own output). It ignores Ctrl-C: an interrupt is ours to pass on,
    in order (:mod:`authzkit.loadtest.interrupt`)."""
    from authzkit.wire.children import leave_interrupts_to_parent

    # The run directory holds the locustfile Locust imports: no __pycache__ beside the results.
    env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
    if output is None:
        return subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            preexec_fn=leave_interrupts_to_parent,
        )
    with output.open("wb") as written:
        return subprocess.Popen(
            command,
            stdout=written,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            preexec_fn=leave_interrupts_to_parent,
        )


def stop_locust(process: subprocess.Popen[bytes]) -> int:
    """Locust stopped (SIGTERM: it writes its files first), unless it already ended."""
    from authzkit.wire.children import stop_process

    code = process.poll()
    return stop_process(process) if code is None else code


def counted_since(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The sandbox's counters (numbers, and per-name numbers) minus an earlier snapshot:
    what it counted in between (a per-name count that did not change is left out)."""
    counted: dict[str, Any] = {}
    for key, value in after.items():
        earlier = before.get(key)
        if isinstance(value, dict):
            inner = counted_since(value, earlier if isinstance(earlier, dict) else {})
            counted[key] = {k: v for k, v in inner.items() if v != 0}
        elif isinstance(value, int | float) and isinstance(earlier, int | float):
            counted[key] = value - earlier
        else:
            counted[key] = value
    return counted


class LocustRun:
    """One run's Locust child and what it needs, as a ``with`` block: the sandbox the plan
    starts (when it starts one), the preflight (:meth:`reach_target`), Locust
    (:meth:`start`); leaving the block stops whatever still runs, an interrupt or not.
    ``meta`` is run.json so far: the host, the preflight and ``locust_command`` join it."""

    def __init__(self, plan: RunPlan, out: Path, meta: dict[str, Any]) -> None:
        from authzkit.sandbox.process import SandboxProcess

        self.plan, self.out, self.meta = plan, out, meta
        # The sandbox's own log (it announces its demo credentials) stays out of the run dir.
        self.sandbox: SandboxProcess | None = (
            SandboxProcess(token_ttl=plan.token_ttl, dialect=plan.dialect, **plan.faults.given())
            if plan.sandbox
            else None
        )
        self.host = ""
        self.env: dict[str, str] = {}
        self.subjects: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._private: Path | None = None  # a filtered subjects file

    def __enter__(self) -> LocustRun:
        self._private = Path(tempfile.mkdtemp(prefix=f"authzkit-{self.plan.command}-"))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        from authzkit.loadtest.interrupt import shielded

        with shielded():
            if self.process is not None:
                stop_locust(self.process)
            if self.sandbox is not None:
                self.sandbox.stop()
            if self._private is not None:
                shutil.rmtree(self._private, ignore_errors=True)

    def reach_target(self) -> str:
        """Start the sandbox (when the run owns one), note the host in run.json and run
        the preflight (a :class:`ConfigError` when it refused every subject); the host."""
        from authzkit.wire.children import child_env

        if self.sandbox is not None:
            self.sandbox.start()
            self.host, self.env = self.sandbox.base_url, child_env(self.sandbox.env())
        else:
            self.host, self.env = str(self.plan.settings.base_url), child_env()
        self.meta["host"] = self.host
        self.meta["preflight"], self.subjects = self._preflight()
        return self.host

    def where(self) -> str:
        """What the start line says of the target: `` (sandbox)``, a master's workers…"""
        from authzkit.wire.spec import DIALECTS

        plan = self.plan
        if plan.role.master:
            return f" (master of {plan.role.expect_workers} workers, port {plan.role.master_port})"
        if self.sandbox is not None:
            dialect = "" if plan.dialect == DIALECTS[0] else f", {plan.dialect} dialect"
            return f" (sandbox{dialect})"  # the draft is the default: only another is named
        return " (an authzkit sandbox started elsewhere)" if plan.elsewhere else ""

    def sandbox_stats(self) -> dict[str, Any]:
        """The sandbox's counters now (empty when the run started none)."""
        return self.sandbox.admin().stats() if self.sandbox is not None else {}

    def new_watch(self) -> Watch:
        """What samples the resources of the processes started here, and marks the faults
        the sandbox injects when it was asked for some worth a mark (rotations, pauses,
        outage)."""
        from authzkit.loadtest.resources import Watch

        plan, sandbox = self.plan, self.sandbox
        if sandbox is None or sandbox.process is None:
            return Watch(master=bool(plan.role.master or plan.load.processes))
        faults = plan.faults
        marked = bool(faults.rotate_keys_every or faults.pause_every or faults.token_outage)
        return Watch(
            sandbox=sandbox.process.pid,
            master=bool(plan.load.processes),
            stats=sandbox.admin().stats if marked else None,
        )

    def start(
        self, extra: Sequence[str] = (), watch: Watch | None = None
    ) -> subprocess.Popen[bytes]:
        """Locust, headless, writing into the run directory, stopping by itself after the
        plan's run time; ``extra`` goes on its command line after authzkit's options."""
        from authzkit.loadtest.child import locust_command
        from authzkit.loadtest.plan import locust_options

        plan = self.plan
        command = locust_command(
            self.out / "locustfile.py",
            [plan.user_class],
            host=self.host,
            users=plan.load.users,
            spawn_rate=plan.load.spawn_rate,
            run_time=plan.load.run_time,
            out=self.out,
            extra=[*locust_options(plan, self.subjects), *extra],
        )
        self.meta["locust_command"] = command[1:]  # secrets travel in the environment
        self.process = start_locust(command, self.env, self.out, self.out / OUTPUT_FILE)
        if watch is not None:
            watch.locust_started(self.process.pid)
        return self.process

    def follow(self, watch: Watch | None = None) -> int:
        """Wait for Locust with progress lines (unless quiet), sampling the resources with
        ``watch`` (they join ``summary.json``, an interrupted run's too); its exit code.
        An interrupt stops it (so it writes what it has) and goes on up."""
        from authzkit.loadtest.progress import progress
        from authzkit.loadtest.resources import write_resources

        assert self.process is not None, "start() first"
        try:
            return progress(
                self.process,
                self.out,
                self.plan.seconds,
                self.plan.quiet,
                watch,
                waits=self.plan.role.waits,
            )
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (see interrupt.py): Locust writes
            stop_locust(self.process)  # its results on SIGTERM, then the run reports them
            raise
        finally:
            if watch is not None:
                write_resources(self.out, watch)

    def wait_end(self, seconds: float) -> int:
        """Locust's end, waited for at most ``seconds`` (then stopped); its exit code
        (-1 when it had to be stopped)."""
        assert self.process is not None, "start() first"
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            stop_locust(self.process)
            return -1

    def _preflight(self) -> tuple[dict[str, Any], Path | None]:
        """The preflight when it is due (what run.json says of it, and the subjects file
        Locust gets). Due unless ``--no-preflight``, and on the sandbox started here only
        when an option or variable named the scenario's action."""
        from authzkit.loadtest.plan import user_options
        from authzkit.loadtest.preflight import check_before_load
        from authzkit.wire.config import Settings

        plan, sandbox = self.plan, self.sandbox
        subjects = plan.subjects.resolve() if plan.subjects is not None else None
        if not plan.preflight:
            return {"ran": False, "reason": "--no-preflight"}, subjects
        if sandbox is not None and not plan.named:
            own = "its world's entities" if plan.evaluations else "its demo actions"
            return {"ran": False, "reason": f"the sandbox started here, {own}"}, subjects
        settings = (
            plan.settings if sandbox is None else Settings.from_env(sandbox.env(), dotenv=None)
        )
        if plan.evaluations is not None:  # AuthZEN: the first call asked once
            from authzkit.loadtest.authzen import preflight

            return preflight(settings, self.host, plan.action_named, plan.evaluations), None
        assert self._private is not None, "inside the with block"
        result, subjects = check_before_load(
            settings,
            host=self.host,
            kind=plan.kind,
            actions=plan.actions,
            user_class=plan.user_class,
            subjects=subjects,
            options=user_options(list(plan.locust_args)),
            out=self.out,
            private=self._private,
        )
        if result.fatal:
            raise ConfigError(result.error_message())
        print(result.summary(), flush=True)
        for line in result.warnings():
            print(f"authzkit loadtest: warning: {line}", file=sys.stderr, flush=True)
        if plan.role.master and result.dropped and plan.subjects is not None:
            # The workers read the path the master forwards: a copy here is not on their side.
            print(
                f"authzkit loadtest: warning: the workers read {plan.subjects} as it is "
                f"(a filtered copy would not reach them): remove the rows named above from it",
                file=sys.stderr,
                flush=True,
            )
            subjects = plan.subjects.resolve()
        return {
            "ran": True,
            "requests": sum(result.requests.values()),
            "subjects_asked": len(result.checks),
            "dropped": list(result.dropped),
        }, subjects


def master_gave_up(plan: RunPlan, out: Path, code: int) -> int | None:
    """After a ``--master`` run: when Locust gave up waiting for the workers, say so in one
    line, write the summary the report reads (who connected, who never reported) and
    return :data:`~authzkit.loadtest.roles.GAVE_UP`; None when the run went ahead."""
    from authzkit.loadtest.record.face import build_summary, never_connected, read_roster
    from authzkit.loadtest.roles import GAVE_UP, GAVE_UP_LOG, gave_up_message

    if not plan.role.master or code == 0 or (out / "summary.json").exists():
        return None
    try:
        log = (out / "locust.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        log = ""
    if GAVE_UP_LOG not in log:
        return None
    workers = never_connected(int(plan.role.expect_workers or 0), read_roster(out))
    summary = build_summary(
        requests=0,
        failures=0,
        p95_ms=0.0,
        errors=[],
        counters=[],
        max_p95_ms=plan.load.limit("--max-p95-ms"),
        max_failure_ratio=plan.load.limit("--max-failure-ratio"),
        workers=workers,
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"authzkit loadtest: {gave_up_message(plan.role, workers['connected'])}", file=sys.stderr)
    return GAVE_UP


def run_worker(plan: RunPlan) -> int:
    """A Locust worker running the plan's user class for the master at ``--master-host``
    (the plan checked its settings and subjects file); its exit code. It prints to this
    process's output and stops when the master ends the run (or, never reached, after
    Locust's own retries); Ctrl-C or SIGTERM stops it first (exit 128 + the signal)."""
    from authzkit.loadtest.child import worker_command
    from authzkit.loadtest.interrupt import Interrupted, interruptible
    from authzkit.loadtest.plan import scenario_classes
    from authzkit.loadtest.record.face import MASTER_LOST
    from authzkit.loadtest.roles import master_lost_message, role_options
    from authzkit.wire.children import child_env

    extra = role_options(plan.role) + list(plan.locust_args)
    with tempfile.TemporaryDirectory(prefix="authzkit-worker-") as folder:
        # Every class of the scenario: the master names the one it runs (--rate, --fast).
        classes = scenario_classes(plan.scenario)
        locustfile = write_locustfile(Path(folder), *classes)
        command = worker_command(locustfile, classes, extra)
        print(
            f"authzkit loadtest: worker ({plan.scenario} scenario) for the master at "
            f"{plan.role.master_host}:{plan.role.master_port}",
            flush=True,
        )
        process = start_locust(command, child_env(), Path(folder))
        try:
            with interruptible():
                code = process.wait()
        except Interrupted as stopped:
            stop_locust(process)
            return stopped.exit_code
    if code == MASTER_LOST:
        print(f"authzkit loadtest: {master_lost_message(plan.role)}", file=sys.stderr, flush=True)
    return code


__all__ = [
    "LocustRun",
    "counted_since",
    "master_gave_up",
    "run_worker",
    "start_locust",
    "stop_locust",
    "write_locustfile",
]
