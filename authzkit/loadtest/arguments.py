"""The options of ``authzkit loadtest`` and ``authzkit report``, and what is checked of
them before anything starts: values while argparse parses, then the ``[loadtest]`` extra and
the arguments after ``--`` (asked of Locust's parser in a child, never imported here;
docs/internals.md, "What was asked").
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import Any

from authzkit.loadtest.authzen import add_evaluation_options
from authzkit.loadtest.roles import add_role_arguments
from authzkit.loadtest.soak import (
    SOAK_MAX_DRIFT,
    SOAK_MAX_FAILURE_DRIFT,
    SOAK_RATE,
    SOAK_ROTATE_KEYS_EVERY,
    SOAK_RUN_TIME,
    SOAK_TOKEN_TTL,
    RunTimeGiven,
)
from authzkit.sandbox.arguments import add_fault_options
from authzkit.shared import options
from authzkit.shared.extras import install_line
from authzkit.wire.actions import ACTIONS
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import DIALECTS

SCENARIO_NAMES = ("authorize", "challenge", "token")
# The action kind each scenario sends ("token": plain authorize calls on refreshing tokens).
SCENARIO_ACTION = {"authorize": "plain", "challenge": "challenge", "token": "plain"}
TOKEN_SCENARIO_TTL = 4  # a short sandbox token, so refreshes happen within a short run
# What Locust's end-of-run verdict reads (a load test's; a capacity search judges each step).
VERDICT_OPTIONS = (
    "--max-p95-ms",
    "--max-p99-ms",
    "--max-p999-ms",
    "--max-failure-ratio",
    "--max-lag-ms",
    "--max-drift",
    "--max-failure-drift",
    "--drift-window",
    "--warm-up",
)
INSTALL_LINE = install_line("loadtest")
# What each command imports, by module name (the pip package may be named otherwise).
NEEDED = {
    "loadtest": ("locust", "hdrh", "psutil", "pandas", "matplotlib", "starlette", "uvicorn"),
    "report": ("pandas", "matplotlib", "hdrh"),
    "worker": ("locust", "hdrh", "psutil", "numpy"),  # a --worker never reports: [worker]
}
# Locust options `authzkit loadtest` sets itself (after `--` they would fight its own).
OWNED = {
    "-f": "the locustfile",
    "--locustfile": "the locustfile",
    "--headless": "headless mode",
    "-u": "-u/--users",
    "--users": "-u/--users",
    "-r": "-r/--spawn-rate",
    "--spawn-rate": "-r/--spawn-rate",
    "-t": "-t/--run-time",
    "--run-time": "-t/--run-time",
    "-H": "the host",
    "--host": "the host",
    "--csv": "the output files",
    "--html": "the output files",
    "--json-file": "the output files",
    "--logfile": "the output files",
    "--summary-file": "the output files",
    "--processes": "--processes",
    "--master": "--master",
    "--worker": "--worker",
    "--expect-workers": "--expect-workers, with --master",
    "--expect-workers-max-wait": "--expect-workers-max-wait, with --master",
    "--master-host": "--master-host, with --worker",
    "--master-port": "--master-port",
    "--master-bind-host": "--master-bind-host, with --master",
    "--master-bind-port": "--master-port",
    "--wait-time": "--wait-time",
    "--subjects": "--subjects",
    "--rate": "--rate",
    "--max-p95-ms": "--max-p95-ms",
    "--max-p99-ms": "--max-p99-ms",
    "--max-p999-ms": "--max-p999-ms",
    "--max-failure-ratio": "--max-failure-ratio",
    "--max-lag-ms": "--max-lag-ms",
    "--max-drift": "--max-drift",
    "--max-failure-drift": "--max-failure-drift",
    "--drift-window": "--drift-window",
    "--warm-up": "--warm-up",
    "--capacity-dir": "the capacity search's folder, with `authzkit capacity`",
    "--dialect": "--dialect",
    "--batch": "--batch, with --dialect authzen",
    "--semantic": "--semantic, with --dialect authzen",
}
CHECK_TIMEOUT_S = 60.0


def require_extra(command: str) -> None:
    """A :class:`ConfigError` naming the ``pip install`` line when a module the command
    needs is missing (looked up, not imported: nothing heavy is loaded here)."""
    missing = [name for name in NEEDED[command] if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"needs the [loadtest] extra ({', '.join(missing)} not installed): {INSTALL_LINE}"
        )


def check_locust_args(locust_args: list[str]) -> list[str]:
    """The arguments after ``--`` (without the ``--``), once locust's parser accepts them:
    options authzkit sets itself are refused by name, anything else locust would refuse is
    refused with locust's own words, all before a sandbox starts."""
    extra = [arg for arg in locust_args if arg != "--"]
    for arg in extra:
        option = arg.split("=", 1)[0]
        if option in OWNED:
            raise ConfigError(
                f"after --: {option} is set by `authzkit loadtest` itself "
                f"({OWNED[option]}); give it to authzkit loadtest, or run "
                f"locust yourself"
            )
    if extra:
        _ask_locust(extra)
    return extra


def _ask_locust(extra: list[str]) -> None:
    """Locust's own parser, in a child (it monkey-patches with gevent on import)."""
    from authzkit.loadtest.record.face import CHECK_ARGUMENTS_SCRIPT
    from authzkit.wire.children import child_env

    done = subprocess.run(
        [sys.executable, "-c", CHECK_ARGUMENTS_SCRIPT, *extra],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "error:" in line]
        reason = (
            lines[-1].split("error:", 1)[1].strip()
            if lines
            else (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        )
        raise ConfigError(f"after --: locust refuses {' '.join(extra)}: {reason}")


_SCENARIO_HELP = {
    "authorize": "authorize (plain)",
    "challenge": "challenge (full round trip)",
    "token": "token (refresh under load)",
}


def add_scenario_options(run: Any, names: tuple[str, ...] = SCENARIO_NAMES) -> None:
    """``--scenario`` (among ``names``) and ``--fast``: what the users send, defined once
    for every command that runs load."""
    listed = [_SCENARIO_HELP[name] for name in names]
    run.add_argument(
        "--scenario",
        choices=names,
        default=names[0],
        help=f"{', '.join(listed[:-1])} or {listed[-1]}; default {names[0]}",
    )
    run.add_argument(
        "--fast",
        action="store_true",
        help="use Locust's FastHttpUser client (authorize and challenge; the open model "
        "always sends through geventhttpclient straight)",
    )


def add_processes_option(run: Any) -> None:
    """``--processes``: Locust worker processes on this machine."""
    run.add_argument(
        "--processes",
        type=options.count(1, also=(-1,)),
        default=None,
        help="Locust worker processes on this machine (-1 = one per core)",
    )


def _add_load_shape(run: Any) -> None:
    add_scenario_options(run)
    run.add_argument(
        "-u", "--users", type=options.count(1), default=10, help="concurrent users (default 10)"
    )
    run.add_argument(
        "-r",
        "--spawn-rate",
        type=options.positive_rate,
        default=None,
        help="users started per second (default: all at once)",
    )
    run.add_argument(
        "-t",
        "--run-time",
        type=options.run_time,
        default="30s",
        action=RunTimeGiven,
        help=f"how long to run, at least 1s: e.g. 30s, 2m (default 30s; {SOAK_RUN_TIME} "
        f"with --soak)",
    )
    run.add_argument(
        "--soak",
        action="store_true",
        help=f"an endurance run: what is not given is preset: -t {SOAK_RUN_TIME}, --rate "
        f"{SOAK_RATE:g}, --max-drift {SOAK_MAX_DRIFT:g}, --max-failure-drift "
        f"{SOAK_MAX_FAILURE_DRIFT:g}, and on the sandbox started here --token-ttl "
        f"{SOAK_TOKEN_TTL} and --rotate-keys-every {SOAK_ROTATE_KEYS_EVERY:g}",
    )
    options.add_load_options(run, "--wait-time")
    add_processes_option(run)


def _add_open_model(run: Any) -> None:
    """The open model's schedule: load options, each defined once for this parser and
    Locust's (:mod:`authzkit.shared.options.load`)."""
    options.add_load_options(run, "--rate", "--arrivals", "--arrivals-seed", "--max-in-flight")


def _add_thresholds(run: Any) -> None:
    """What the verdict judges: load options too, defined once."""
    options.add_load_options(run, *VERDICT_OPTIONS)


def _action_help(kind: str) -> str:
    """The help of the option that chooses the ``kind`` action: its name, variable, meaning
    and demo action from their one definition, the scenarios from the ones that send it."""
    setting = ACTIONS[kind]
    scenarios = [name for name, sent in SCENARIO_ACTION.items() if sent == kind]
    which = f"{' and '.join(scenarios)} scenario{'s' if len(scenarios) > 1 else ''}"
    return (
        f"{setting.meaning} ({which}; default {setting.variable}, on the sandbox started "
        f"here {setting.sandbox_default}; required on another environment)"
    )


def add_environment_options(run: Any, default_out: str = "loadtest-out/<scenario>-<time>") -> None:
    """Where the results go, who the users are, the sandbox started for the run, the
    actions, the preflight: the same for every command that runs load."""
    run.add_argument(
        "--out",
        type=options.output_directory,
        default=None,
        help=f"output directory (default {default_out}, a new one per run); refused while "
        "another run writes there",
    )
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the finished run that --out holds (refused without it)",
    )
    options.add_load_options(run, "--subjects")
    options.add_token_ttl(
        run,
        None,
        f"sandbox token lifetime in whole seconds >= 1 (default "
        f"{TOKEN_SCENARIO_TTL} for the token scenario, else the "
        f"sandbox's); like `authzkit sandbox --token-ttl`",
    )
    options.add_dialect(
        run,
        "what the started sandbox speaks: the service's draft (default), "
        "the provider's published API (OIDC token endpoint with "
        "private_key_jwt, bare 401s), or authzen (AuthZEN 1.0 evaluations; "
        "against AUTHZKIT_BASE_URL too, as AUTHZKIT_DIALECT=authzen); the draft's two are "
        "ignored with AUTHZKIT_BASE_URL",
        choices=DIALECTS,
    )
    add_evaluation_options(run)
    options.add_action_options(run, _action_help("plain"), _action_help("challenge"))
    run.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the preflight (one authorize per distinct subject, at most "
        "20, before any load; exit 2 when every one is refused)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    run.add_argument(
        "--no-report",
        action="store_true",
        help="print the summary and keep the run's data, but write no report.html "
        "(its plots take seconds); `authzkit report DIR` writes it later",
    )


def add_locust_passthrough(run: Any) -> None:
    """What goes on after ``--`` (to locust) and the sandbox's fault flags (to the sandbox
    the command starts): the same for every command that runs load."""
    run.add_argument(
        "locust_args",
        nargs="*",
        metavar="-- LOCUST_ARG",
        help="anything after -- goes to locust unchanged (checked with locust's "
        "own parser before the run starts)",
    )
    add_fault_options(
        run, note=" (passed to the sandbox process started here; refused with AUTHZKIT_BASE_URL)"
    )


def add_loadtest_arguments(run: Any) -> None:
    """Every option of ``authzkit loadtest``, each typed and ranged."""
    _add_load_shape(run)
    _add_open_model(run)
    _add_thresholds(run)
    add_environment_options(run)
    add_role_arguments(run)
    add_locust_passthrough(run)


def add_report_arguments(report: Any) -> None:
    """The options of ``authzkit report``."""
    report.add_argument(
        "directory", type=options.existing_directory, help="a directory `authzkit loadtest` wrote"
    )
    report.add_argument(
        "--compare",
        type=options.existing_directory,
        metavar="OTHER_DIR",
        help="baseline run: print deltas (this run minus the baseline)",
    )
    report.add_argument(
        "--max-regression",
        type=options.number(minimum=0, what="a percentage"),
        default=None,
        metavar="PCT",
        help="with --compare: exit 1 when a row's p99 grew by more than PCT "
        "percent (from the HdrHistograms when both runs have them; runs "
        "recorded before histograms are judged on Locust's p95) or its "
        "failure ratio grew at all",
    )


__all__ = [
    "INSTALL_LINE",
    "OWNED",
    "SCENARIO_ACTION",
    "SCENARIO_NAMES",
    "TOKEN_SCENARIO_TTL",
    "VERDICT_OPTIONS",
    "add_environment_options",
    "add_loadtest_arguments",
    "add_locust_passthrough",
    "add_processes_option",
    "add_report_arguments",
    "add_scenario_options",
    "check_locust_args",
    "require_extra",
]
