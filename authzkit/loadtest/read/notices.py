"""What a run's report must say before any number: the run was interrupted, it sent no
request (and why), the open model's generator fell behind or its schedule lag is a large
share of the latency it reports, two compared runs measured different things, a
distributed run's workers did not all report.

Each is a sentence naming its figures, shared by the terminal (``authzkit loadtest``,
``authzkit report``) and the page (:mod:`~authzkit.loadtest.read.html`), so both say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.loadtest.read import units
from authzkit.loadtest.record.schedule import LATE_US

if TYPE_CHECKING:
    from authzkit.loadtest.read.run import RunResults

BEHIND_SHARE = 0.01  # late starts or cap hits above 1 % of the starts: not the load asked
# An open-model run whose schedule lag p50 is more than this share of its latency p50: the
# generator's own lateness, counted as latency from the intended start, is a large part of
# what the run reports (the rule of lag_warning, for the terminal and the page).
LAG_SHARE = 0.20
AGGREGATED = "Aggregated"
_REFUSAL = "cannot start the load test:"


def request_count(run: RunResults) -> int:
    """The requests the run completed (0 for a run without rows)."""
    rows = run.rows[run.rows["name"] == "Aggregated"]
    return int(rows["requests"].iloc[0]) if not rows.empty else 0


def run_seconds(run: RunResults) -> float | None:
    """How long the run really ran, in seconds: the load's, as the Locust process measured
    it (``summary.json``'s ``run_s``, from the test's start to its end, an interrupted
    run's too), else ``run.json``'s start to finish (whole seconds, the sandbox's start
    included); None when neither was recorded."""
    from authzkit.loadtest.read.run import meta_seconds

    measured = run.summary.get("run_s")
    if isinstance(measured, int | float):
        return float(measured)
    return meta_seconds(run.meta)


def seconds_text(seconds: float) -> str:
    """``4.6 s``, ``75 s``: a run's duration as said in a sentence."""
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds:,.0f} s"


def interrupted_after(run: RunResults) -> str | None:
    """``interrupted by SIGINT after 4.6 s`` for an interrupted run (its real duration,
    not the run time asked), else None."""
    name = run.meta.get("interrupted")
    if not name:
        return None
    seconds = run_seconds(run)
    return f"interrupted by {name}" + (
        f" after {seconds_text(seconds)}" if seconds is not None else ""
    )


def _locust_refusal(directory: Path) -> str | None:
    """The reason authzkit's users logged when they could not start (in ``locust.log``)."""
    try:
        text = (directory / "locust.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = [line.split(_REFUSAL, 1)[1].strip() for line in text.splitlines() if _REFUSAL in line]
    return found[-1] if found else None


def no_requests_reason(run: RunResults) -> str:
    """Why a run sent no request, in one line with what to change."""
    meta = run.meta
    if meta.get("interrupted"):
        return f"{interrupted_after(run)} before any request completed"
    roster = run.summary.get("workers") or {}
    expected, connected = roster.get("expected"), int(roster.get("connected") or 0)
    if expected and connected < expected and not roster.get("took_part"):
        return (
            f"the master gave up waiting for its workers: {connected} of {expected} "
            f"connected (see each worker's own output for why it did not)"
        )
    refusal = _locust_refusal(run.directory)
    if refusal:
        return refusal
    users, spawn = meta.get("users", "?"), meta.get("spawn_rate") or meta.get("users")
    load = f"{users} users" + (
        f" started at {units.rate(spawn)}" if isinstance(spawn, int | float) else ""
    )
    if is_open_model(meta):
        load = f"the open model at {units.rate(meta['rate'])}"
    return (
        f"no request completed within the {meta.get('run_time', '?')} run ({load}): the "
        f"users were still spawning or starting when it ended; lower -u or raise -r/-t "
        f"(locust.log in {run.directory} may say more)"
    )


def interrupted(run: RunResults) -> str | None:
    """The sentence a partial run's page and terminal summary open with, else None:
    ``Interrupted by SIGINT after 4.6 s: partial results, up to the stop.``"""
    said = interrupted_after(run)
    return f"I{said[1:]}: partial results, up to the stop." if said else None


def shortfall(schedule: Mapping[str, Any]) -> list[str]:
    """Why the open model's offered load was not the rate asked, when the generator fell
    behind: late starts (sent more than 2 ms after their time) or in-flight cap hits above
    1 % of the intended starts, with their figures. Empty when it kept up."""
    intended = int(schedule.get("intended") or 0)
    if not intended:
        return []
    late, capped = int(schedule.get("late") or 0), int(schedule.get("cap_reached") or 0)
    lag_ms = float(schedule.get("lag_p99_us") or 0) / 1000
    found = []
    if late > BEHIND_SHARE * intended:
        found.append(
            f"{late:,} of {intended:,} starts ({late / intended:.0%}) were sent more "
            f"than {LATE_US // 1000} ms late (schedule lag p99 {lag_ms:,.1f} ms)"
        )
    if capped > BEHIND_SHARE * intended:
        found.append(
            f"the in-flight cap held back {capped:,} of {intended:,} starts "
            f"({capped / intended:.0%})"
        )
    if not found:
        return []
    rate = schedule.get("rate")
    asked = f"the {units.rate(rate)} asked" if isinstance(rate, int | float) else "the rate asked"
    return [
        f"the offered load was not {asked}: {'; '.join(found)}; latencies include the "
        f"generator's own delay (lower --rate, raise --max-in-flight or add --processes)"
    ]


def lag_figures(summary: Mapping[str, Any]) -> dict[str, float] | None:
    """The open model's schedule lag beside the latency it inflates, in µs: ``lag_p50``,
    ``lag_p99`` (send minus intended start), ``latency_p50``, ``latency_p99`` (the
    ``Aggregated`` row, from the intended start: lag included) and ``service_p50`` (from the
    send); None for a closed-loop run or one without histograms. A run recorded before
    ``lag_p50_us`` existed reads its lag p50 as latency p50 minus service-time p50."""
    schedule = summary.get("schedule") or {}
    latency = (summary.get("latency_us") or {}).get(AGGREGATED) or {}
    service = (summary.get("service_time_us") or {}).get(AGGREGATED) or {}
    if not schedule or not latency.get("count"):
        return None
    latency_p50, service_p50 = float(latency.get("p50") or 0), float(service.get("p50") or 0)
    lag_p50 = schedule.get("lag_p50_us")
    return {
        "lag_p50": float(lag_p50) if lag_p50 is not None else max(latency_p50 - service_p50, 0),
        "lag_p99": float(schedule.get("lag_p99_us") or 0),
        "latency_p50": latency_p50,
        "latency_p99": float(latency.get("p99") or 0),
        "service_p50": service_p50,
    }


def lag_beside_latency(summary: Mapping[str, Any]) -> str | None:
    """One line, terminal and page alike: the schedule lag beside the latency it inflates
    (``schedule lag p50 120 µs, p99 1.52 ms beside latency p50 2.67 ms, p99 5.70 ms …``);
    None for a closed-loop run."""
    figures = lag_figures(summary)
    if figures is None:
        return None
    return (
        f"schedule lag p50 {units.duration(figures['lag_p50'])}, p99 "
        f"{units.duration(figures['lag_p99'])} beside latency p50 "
        f"{units.duration(figures['latency_p50'])}, p99 {units.duration(figures['latency_p99'])}"
        f" (from the intended start, lag included; service time from the send p50 "
        f"{units.duration(figures['service_p50'])})"
    )


def lag_warning(summary: Mapping[str, Any]) -> list[str]:
    """The warning of an open-model run whose schedule lag p50 is more than
    :data:`LAG_SHARE` of its latency p50: the cause is the generator, not the service, and
    the remedy. Empty otherwise."""
    figures = lag_figures(summary)
    if figures is None or not figures["latency_p50"]:
        return []
    share = figures["lag_p50"] / figures["latency_p50"]
    if share <= LAG_SHARE:
        return []
    return [
        f"the generator, not the service: the schedule lag p50 "
        f"({units.duration(figures['lag_p50'])}) is {share:.0%} of the latency p50 "
        f"({units.duration(figures['latency_p50'])}): requests were sent that late after "
        f"their intended start, and that lateness is counted as latency (more than "
        f"{LAG_SHARE:.0%}); read the service time from the send (p50 "
        f"{units.duration(figures['service_p50'])}) for the service, and run the generator "
        f"on a quieter machine or with more --processes for the latency"
    ]


def took_part(roster: Mapping[str, Any]) -> str | None:
    """``2 of 2 expected`` for a distributed run's header; None for a run on one machine."""
    if not roster:
        return None
    expected = roster.get("expected")
    count = int(roster.get("took_part") or 0)
    return f"{count} of {expected} expected" if expected else str(count)


def workers(roster: Mapping[str, Any]) -> list[str]:
    """What the master saw go wrong with its workers: expected ones that never reported
    (their requests are in no total), ones that stopped reporting before the end. A worker
    lost mid-run whose loss the run's verdict states (its node's ``lost``: one problem line,
    exit 1) is not said a second time here."""
    found = []
    never, expected = int(roster.get("never_reported") or 0), roster.get("expected")
    if never:
        of = f" of {expected} expected" if expected else ""
        found.append(
            f"{never}{of} worker{'s' if never > 1 else ''} never reported: the totals "
            f"count only the {int(roster.get('took_part') or 0)} that did"
        )
    nodes = {n.get("node"): n for n in roster.get("nodes") or []}
    for node in roster.get("stopped_reporting") or []:
        entry = nodes.get(node) or {}
        if entry.get("lost"):
            continue  # the verdict's problem line names it, when and the load missing
        quiet = entry.get("silent_s")
        when = f" {quiet:g} s before the end" if isinstance(quiet, int | float) else ""
        found.append(
            f"worker {node} stopped reporting{when}: its requests after its last report "
            f"are missing from the totals"
        )
    return found


def generator_memory(summary: Mapping[str, Any]) -> list[str]:
    """The warning of a run whose generator's own memory grew steadily (``resources``:
    :func:`~authzkit.loadtest.resources.steady_growth`): its latencies are suspect too."""
    generator = (summary.get("resources") or {}).get("generator") or {}
    lines = []
    for role in generator.get("growing") or []:
        found = generator["processes"][role]
        lines.append(
            f"the generator's own memory grew steadily: {role} "
            f"+{found['rss_growth_bytes_per_min'] / 1048576:.1f} MiB/min (r² {found['r2']:.2f}, "
            f"+{found['grew_bytes'] / 1048576:.0f} MiB in all); a leaking generator's garbage "
            f"collection and swapping bias the latencies it reports (see resources.png)"
        )
    return lines


def drift_line(summary: Mapping[str, Any]) -> str | None:
    """The drift in one line (terminal and page): the two windows' p99, the ratio, the
    slope; None when the run was too short to judge."""
    from authzkit.loadtest.read.units import duration

    found = summary.get("drift") or {}
    if not found.get("judged"):
        return None
    first, last = found["first"], found["last"]
    p99 = [("-" if w["p99"] is None else duration(w["p99"])) for w in (first, last)]
    ratio = "-" if found.get("ratio") is None else f"{found['ratio']:.2f}x"
    line = (
        f"drift: p99 {p99[0]} in s {first['from_s']}-{first['to_s']}, {p99[1]} in "
        f"s {last['from_s']}-{last['to_s']} ({ratio})"
    )
    slope = found.get("slope")
    if slope:
        sign = "+" if slope["p99_us_per_min"] >= 0 else "-"
        line += (
            f", p99 slope {sign}{duration(abs(slope['p99_us_per_min']))}/min (r² {slope['r2']:.2f})"
        )
    return line


def is_open_model(meta: Mapping[str, Any]) -> bool:
    """Whether a run's ``run.json`` says it ran the open model: it names a rate."""
    return bool(meta.get("rate"))


def load_model(meta: Mapping[str, Any], *, detail: bool = False) -> str:
    """A run's load model in words (``open model (200/s)`` or ``closed loop``); with
    ``detail``, as the headline shows it, with the arrivals or the users (``open model,
    200/s (poisson)``, ``closed loop, 10 users``). One label for every place that says it."""
    if is_open_model(meta):
        shown = units.rate(meta["rate"])
        arrivals = meta.get("arrivals") or "constant"
        return f"open model, {shown} ({arrivals})" if detail else f"open model ({shown})"
    return f"closed loop, {meta.get('users', '?')} users" if detail else "closed loop"


def model_mismatch(run: RunResults, baseline: RunResults) -> list[str]:
    """A warning when one run is open-model and the other closed-loop: their latencies
    start from different moments (intended start vs actual send)."""
    if is_open_model(run.meta) == is_open_model(baseline.meta):
        return []
    this, other = load_model(run.meta), load_model(baseline.meta)
    return [
        f"this run is {this}, the baseline {other}: open-model latencies count from "
        f"each intended start, closed-loop ones from the actual send, so the changes "
        f"compare different things"
    ]


__all__ = [
    "BEHIND_SHARE",
    "LAG_SHARE",
    "drift_line",
    "generator_memory",
    "interrupted",
    "interrupted_after",
    "is_open_model",
    "lag_beside_latency",
    "lag_figures",
    "lag_warning",
    "load_model",
    "model_mismatch",
    "no_requests_reason",
    "request_count",
    "run_seconds",
    "seconds_text",
    "shortfall",
    "took_part",
    "workers",
]
