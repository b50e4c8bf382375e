"""The options of ``authzkit capacity``: its SLO and its search, beside the load-run options
it shares with ``authzkit loadtest`` (added from their one definition).

Checked before anything starts; on an environment it does not start, a search needs
``--max-rate`` (docs/internals.md, "The search's options").
"""

from __future__ import annotations

import argparse
from typing import Any

from authzkit.loadtest.arguments import (
    add_environment_options,
    add_locust_passthrough,
    add_processes_option,
    add_scenario_options,
)
from authzkit.loadtest.roles import add_role_arguments
from authzkit.shared import options
from authzkit.wire.errors import ConfigError

SCENARIOS = ("authorize", "challenge")  # what a search offers: the open model's scenarios
DEFAULT_START_RATE = 10.0
DEFAULT_STEP_TIME_S = 10.0
DEFAULT_PRECISION = 0.05
DEFAULT_MAX_FAILURE_RATIO = 0.01
WARM_UP_SHARE = 0.2  # of --step-time, by default: discarded at the start of each step

_MILLISECONDS = options.number(above=0, what="milliseconds")
_SECONDS = options.number(above=0, what="seconds")


def _add_slo(run: Any) -> None:
    slo = run.add_argument_group("SLO (every step is judged on its own histograms)")
    slo.add_argument(
        "--max-p99-ms",
        type=_MILLISECONDS,
        required=True,
        metavar="MS",
        help="a step breaks when its p99 (from each call's intended start) exceeds MS",
    )
    slo.add_argument(
        "--max-p999-ms",
        type=_MILLISECONDS,
        default=None,
        metavar="MS",
        help="a step breaks when its p99.9 exceeds MS (default: not judged)",
    )
    options.LOAD_OPTIONS["--max-failure-ratio"].add(
        slo,
        default=DEFAULT_MAX_FAILURE_RATIO,
        help=f"a step breaks when failures / calls exceeds this ratio (default "
        f"{DEFAULT_MAX_FAILURE_RATIO:g}: one in a hundred)",
    )


def _add_search(run: Any) -> None:
    search = run.add_argument_group("search")
    search.add_argument(
        "--start-rate",
        type=options.positive_rate,
        default=DEFAULT_START_RATE,
        metavar="R",
        help=f"the first step's rate, per second (default {DEFAULT_START_RATE:g}); each "
        f"probe doubles the last rate held until a step breaks",
    )
    search.add_argument(
        "--max-rate",
        type=options.positive_rate,
        default=None,
        metavar="R",
        help="no step ever offers more than R per second; required against an environment "
        "the command does not start (AUTHZKIT_BASE_URL): a search overloads its target",
    )
    search.add_argument(
        "--precision",
        type=options.number(above=0, maximum=1, what="a relative precision"),
        default=DEFAULT_PRECISION,
        metavar="P",
        help=f"bisect until the last rate held and the first that broke are within P of "
        f"each other, relative (default {DEFAULT_PRECISION:g})",
    )
    search.add_argument(
        "--step-time",
        type=_SECONDS,
        default=DEFAULT_STEP_TIME_S,
        metavar="S",
        help=f"seconds per step (default {DEFAULT_STEP_TIME_S:g})",
    )
    search.add_argument(
        "--warm-up",
        type=options.number(minimum=0, what="seconds"),
        default=None,
        metavar="S",
        help=f"seconds at the start of each step left out of its verdict (default "
        f"{WARM_UP_SHARE:g} of --step-time)",
    )
    search.add_argument(
        "--min-capacity",
        type=options.positive_rate,
        default=None,
        metavar="R",
        help="exit 1 when the capacity found is below R per second",
    )


def add_capacity_arguments(run: Any) -> None:
    """Every option of ``authzkit capacity``, each typed and ranged."""
    add_scenario_options(run, SCENARIOS)
    add_processes_option(run)
    _add_slo(run)
    _add_search(run)
    options.add_load_options(run, "--arrivals", "--arrivals-seed", "--max-in-flight")
    add_environment_options(run, "loadtest-out/capacity-<scenario>-<time>")
    add_role_arguments(run)
    add_locust_passthrough(run)


def warm_up(args: argparse.Namespace) -> float:
    """The seconds of each step left out of its verdict."""
    given = args.warm_up
    # to the millisecond: a fifth of 3 s reads 0.6, not 0.6000000000000001
    return float(given) if given is not None else round(WARM_UP_SHARE * float(args.step_time), 3)


def check_search(args: argparse.Namespace, *, sandbox_started: bool) -> None:
    """What needs more than one value, refused in one line before anything starts."""
    if warm_up(args) >= args.step_time:
        raise ConfigError(
            f"--warm-up {warm_up(args):g} must be shorter than --step-time {args.step_time:g}"
        )
    if args.max_rate is not None and args.start_rate > args.max_rate:
        raise ConfigError(f"--start-rate {args.start_rate:g} is above --max-rate {args.max_rate:g}")
    if args.max_p999_ms is not None and args.max_p999_ms < args.max_p99_ms:
        raise ConfigError(
            f"--max-p999-ms {args.max_p999_ms:g} is below --max-p99-ms {args.max_p99_ms:g}: "
            f"a p99.9 is never below the p99"
        )
    if args.start_rate * (args.step_time - warm_up(args)) < 1:
        raise ConfigError(
            f"--start-rate {args.start_rate:g} starts no call in a step's judged "
            f"{args.step_time - warm_up(args):g} s: raise --start-rate or --step-time"
        )
    if not sandbox_started and args.max_rate is None and not args.worker:
        raise ConfigError(
            "--max-rate R is required against an environment this command does not start "
            "(AUTHZKIT_BASE_URL): a capacity search overloads its target on purpose, and "
            "no step will offer more than R per second"
        )


__all__ = [
    "DEFAULT_MAX_FAILURE_RATIO",
    "DEFAULT_PRECISION",
    "DEFAULT_START_RATE",
    "DEFAULT_STEP_TIME_S",
    "SCENARIOS",
    "WARM_UP_SHARE",
    "add_capacity_arguments",
    "check_search",
    "warm_up",
]
