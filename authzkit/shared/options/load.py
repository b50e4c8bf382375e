"""The options of a load run, each defined once: think time, subjects, the open model's
schedule and the thresholds of the verdict.

Every parser that offers them (the command's, Locust's) adds them from :data:`LOAD_OPTIONS`;
locust-free, and every value a plain str, int or float (docs/internals.md, "Shared
options").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from authzkit.shared.options.paths import existing_file_name
from authzkit.shared.options.values import count, number, positive_rate, ratio, wait_range

ARRIVALS = ("constant", "poisson")  # the open model's arrival processes
DEFAULT_MAX_IN_FLIGHT = 1000  # calls in flight per process when --max-in-flight is not given


@dataclass(frozen=True)
class Option:
    """One option's one definition: what every parser that offers it is given.

    ``web_ui`` is the one thing only Locust's parser takes (``include_in_web_ui``): the
    thresholds judge a headless run's exit code, so Locust's web form leaves them out."""

    flag: str
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    web_ui: bool = True

    @property
    def dest(self) -> str:
        """The attribute the parsed value lands in (``--max-p95-ms`` → ``max_p95_ms``)."""
        return self.flag.removeprefix("--").replace("-", "_")

    def keywords(self) -> dict[str, Any]:
        """``add_argument``'s keywords, the same for every parser (unset ones left out, so
        argparse's own defaults apply)."""
        given = {
            "type": self.type,
            "default": self.default,
            "metavar": self.metavar,
            "choices": self.choices,
            "help": self.help,
        }
        return {k: v for k, v in given.items() if v is not None or k == "default"}

    def add(self, parser: Any, *, locust: bool = False, **meaning: Any) -> Any:
        """Add this option to ``parser`` (``locust``: Locust's parser, which also takes
        whether its web form shows it). ``meaning`` (``default``, ``help``) is what a
        command whose use of the option differs says instead: the flag, its checked type
        and its metavar stay the definition's."""
        extra = {"include_in_web_ui": self.web_ui} if locust else {}
        keywords = {**self.keywords(), **meaning}
        return parser.add_argument(self.flag, **keywords, **extra)


_MILLISECONDS = number(above=0, what="milliseconds")
_OPTIONS = (
    Option(
        "--wait-time",
        "think time per user between calls: seconds (1) or a range (0.5-2); "
        "default 0: back to back (throughput mode)",
        type=wait_range,
        default="0",
        metavar="S",
    ),
    Option(
        "--subjects",
        "CSV of subject_token, resource_id, resource_type and answers (pin, "
        "login_password, totp_secret); required for a real service (default: minted "
        "by a sandbox)",
        type=existing_file_name,
        metavar="FILE",
    ),
    Option(
        "--rate",
        "open model: R requests (challenge: flows) per second in total, started on "
        "schedule whatever the answers, latencies counted from each intended start "
        "(default: closed loop, --users back to back)",
        type=positive_rate,
        metavar="R",
    ),
    Option(
        "--arrivals",
        "with --rate: evenly spaced starts (constant, the default) or a Poisson process",
        default=ARRIVALS[0],
        choices=ARRIVALS,
    ),
    Option(
        "--arrivals-seed",
        "with --rate --arrivals poisson: seed of the arrivals (same seed, same times)",
        type=count(0),
        metavar="N",
    ),
    Option(
        "--max-in-flight",
        f"with --rate: calls in flight per process at most (default "
        f"{DEFAULT_MAX_IN_FLIGHT}); a start finding N running waits and is counted "
        f"(cap_reached)",
        type=count(1),
        metavar="N",
    ),
    Option(
        "--max-p95-ms",
        "exit code 1 when the aggregated p95 exceeds MS milliseconds",
        type=_MILLISECONDS,
        metavar="MS",
        web_ui=False,
    ),
    Option(
        "--max-p99-ms",
        "exit code 1 when the aggregated p99 exceeds MS milliseconds",
        type=_MILLISECONDS,
        metavar="MS",
        web_ui=False,
    ),
    Option(
        "--max-p999-ms",
        "exit code 1 when the aggregated p99.9 exceeds MS milliseconds",
        type=_MILLISECONDS,
        metavar="MS",
        web_ui=False,
    ),
    Option(
        "--max-failure-ratio",
        "exit code 1 when failures / requests exceeds this ratio (0 to 1: 0.01 is one "
        "in a hundred)",
        type=ratio,
        metavar="RATIO",
        web_ui=False,
    ),
    Option(
        "--max-lag-ms",
        "with --rate: exit code 1 when the schedule lag's p99 (how late the generator "
        "sent its starts) exceeds MS milliseconds",
        type=_MILLISECONDS,
        metavar="MS",
        web_ui=False,
    ),
    Option(
        "--max-drift",
        "exit code 1 when the p99 of the run's last window exceeds R times the p99 of its "
        "first window after the warm-up (R >= 1: 1.5 allows half as slow again)",
        type=number(minimum=1, what="a ratio"),
        metavar="R",
        web_ui=False,
    ),
    Option(
        "--max-failure-drift",
        "exit code 1 when the failure ratio of the last window exceeds the first window's "
        "by more than PP percentage points (0 to 100)",
        type=number(minimum=0, maximum=100, what="percentage points"),
        metavar="PP",
        web_ui=False,
    ),
    Option(
        "--drift-window",
        "the drift's two windows, whole seconds each (default: a sixth of the run, at "
        "least 10 s, at most half of what follows the warm-up)",
        type=count(1),
        metavar="S",
        web_ui=False,
    ),
    Option(
        "--warm-up",
        "whole seconds at the start of the run the drift's first window leaves out "
        "(default: a tenth of the run, at least 1 s)",
        type=count(0),
        metavar="S",
        web_ui=False,
    ),
)
LOAD_OPTIONS: dict[str, Option] = {option.flag: option for option in _OPTIONS}


def add_load_options(parser: Any, *flags: str, locust: bool = False) -> None:
    """Add the load options named by ``flags`` (all of them when none is named) to
    ``parser``, each from its one definition in :data:`LOAD_OPTIONS`."""
    for flag in flags or tuple(LOAD_OPTIONS):
        LOAD_OPTIONS[flag].add(parser, locust=locust)


def max_in_flight(given: int | str | None) -> int:
    """The in-flight cap of one process: ``--max-in-flight`` (at least 1; Locust's web form
    hands a value back as text), else the default. The option stays None when not given,
    so ``run.json`` records only what was asked."""
    return max(int(given), 1) if given else DEFAULT_MAX_IN_FLIGHT


__all__ = [
    "ARRIVALS",
    "DEFAULT_MAX_IN_FLIGHT",
    "LOAD_OPTIONS",
    "Option",
    "add_load_options",
    "max_in_flight",
]
