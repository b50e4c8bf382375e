"""Drift: does the service slow down (or fail more) as the run goes on?

The last window's p99 and failure ratio against the first after the warm-up, each window's
histograms merged before a percentile is read; pure functions of histograms, judged at
exit (docs/internals.md, "Drift").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hdrh.histogram import HdrHistogram

from authzkit.loadtest import percentiles
from authzkit.loadtest.read.units import duration
from authzkit.loadtest.record.histograms import merge, values_at
from authzkit.loadtest.record.timeline import SIGNIFICANT_FIGURES

MIN_WINDOW_S = 10  # the default window: a sixth of the run, at least this (when it fits)
WINDOW_SHARE = 6
WARM_UP_SHARE = 10  # the default warm-up: a tenth of the run, at least 1 s
WINDOW_PERCENTILES = (50.0, 99.0, 99.9)
MIN_SLOPE_POINTS = 3


def default_warm_up(span_s: int) -> int:
    """A tenth of the run's seconds, at least 1 (the first second is partial)."""
    return max(1, span_s // WARM_UP_SHARE)


def default_window(span_s: int, warm_up_s: int) -> int:
    """A sixth of the run, at least :data:`MIN_WINDOW_S`, at most half of what follows
    the warm-up (two windows must fit); at least 1."""
    usable = span_s - warm_up_s
    return max(1, min(max(MIN_WINDOW_S, span_s // WINDOW_SHARE), usable // 2))


def windows_fit(run_s: float, window_s: int | None, warm_up_s: int | None) -> str | None:
    """Why two windows of ``window_s`` after ``warm_up_s`` cannot fit in a run of ``run_s``
    seconds (the last second left out), or None when they fit: checked before the run."""
    span = int(run_s)
    warm_up = default_warm_up(span) if warm_up_s is None else warm_up_s
    window = default_window(span, warm_up) if window_s is None else window_s
    if warm_up + 2 * window <= span - 1:
        return None
    return (
        f"a run of {span} s has {max(span - 1 - warm_up, 0)} whole seconds after a warm-up "
        f"of {warm_up} s (the last second is left out): too few for two windows of "
        f"{window} s (lengthen -t, or shorten --drift-window or --warm-up)"
    )


def window_figures(
    seconds: Mapping[int, HdrHistogram], failures: Mapping[int, int], start: int, end: int
) -> dict[str, Any]:
    """The window ``[start, end)``: its count, p50/p99/p99.9 (µs) from its seconds' merged
    histogram, and its failure ratio."""
    histogram = merge(
        (seconds[s] for s in range(start, end) if s in seconds), figures=SIGNIFICANT_FIGURES
    )
    count = int(histogram.get_total_count())
    failed = sum(failures.get(s, 0) for s in range(start, end))
    values = values_at(histogram, WINDOW_PERCENTILES)
    found = {percentiles.key(p): values[p] if count else None for p in WINDOW_PERCENTILES}
    return {
        "from_s": start,
        "to_s": end,
        "count": count,
        **found,
        "failures": failed,
        "failure_ratio": failed / count if count else None,
    }


def line_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """Least squares: (slope, intercept, r²); flat through the one point, or 0, below two
    points (the drift's p99 slope, the generator's memory growth)."""
    n = len(xs)
    if n < 2:
        return 0.0, (ys[0] if ys else 0.0), 0.0
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    syy = sum((y - mean_y) ** 2 for y in ys)
    slope = sxy / sxx if sxx else 0.0
    r2 = sxy * sxy / (sxx * syy) if sxx and syy else 0.0
    return slope, mean_y - slope * mean_x, r2


def p99_slope(windows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The least-squares line through the p99 of each window (``windows``: consecutive
    windows' :func:`window_figures`, each p99 from its seconds' merged histogram, placed at
    the window's middle): ``p99_us_per_min`` (its slope), ``intercept_us`` (at second 0),
    ``r2`` and ``points``; None below :data:`MIN_SLOPE_POINTS` windows that measured
    something. Fitting each second's p99 instead would average percentiles of a few calls
    each (about the slowest of each second's: noise)."""
    points = [((w["from_s"] + w["to_s"]) / 120.0, float(w["p99"])) for w in windows if w["p99"]]
    if len(points) < MIN_SLOPE_POINTS:
        return None
    slope, intercept, r2 = line_fit([x for x, _ in points], [y for _, y in points])
    return {
        "p99_us_per_min": round(slope, 1),
        "intercept_us": round(intercept, 1),
        "r2": round(r2, 3),
        "points": len(points),
    }


def _problems(
    first: dict[str, Any],
    last: dict[str, Any],
    max_drift: float | None,
    max_failure_drift: float | None,
) -> tuple[float | None, float | None, list[str]]:
    """The p99 ratio, the failure drift in points, and a line per broken limit."""
    problems = []
    ratio = last["p99"] / first["p99"] if first["p99"] and last["p99"] else None
    where = (
        f"first window s {first['from_s']}-{first['to_s']} p99 {_shown(first['p99'])}, "
        f"last window s {last['from_s']}-{last['to_s']} p99 {_shown(last['p99'])}"
    )
    if max_drift is not None and ratio is not None and ratio > max_drift:
        problems.append(f"drift: p99 grew {ratio:.2f}x > --max-drift {max_drift:g} ({where})")
    points = None
    if first["failure_ratio"] is not None and last["failure_ratio"] is not None:
        points = (last["failure_ratio"] - first["failure_ratio"]) * 100
        if max_failure_drift is not None and points > max_failure_drift:
            problems.append(
                f"failure drift: +{points:.2f} percentage points > --max-failure-drift "
                f"{max_failure_drift:g} (failure ratio {first['failure_ratio']:.4f} in the "
                f"first window s {first['from_s']}-{first['to_s']}, "
                f"{last['failure_ratio']:.4f} in the last s {last['from_s']}-{last['to_s']})"
            )
    return ratio, points, problems


def _shown(value: int | None) -> str:
    return "-" if value is None else duration(value)


def judge(
    seconds: Mapping[int, HdrHistogram],
    failures: Mapping[int, int] | None = None,
    *,
    max_drift: float | None = None,
    max_failure_drift: float | None = None,
    window_s: int | None = None,
    warm_up_s: int | None = None,
) -> dict[str, Any]:
    """summary.json's ``drift``: ``seconds`` (second of the run, from 0 → every row's
    histogram of that second) and ``failures`` (second → failed requests) judged; see the
    module's docstring. Too short a run for two windows is not judged, and when a limit
    was given that is a problem too (a CI gate must not pass on nothing)."""
    failures = failures or {}
    span = max(seconds) if seconds else 0  # the last second (partial) is left out
    warm_up = default_warm_up(span) if warm_up_s is None else warm_up_s
    window = default_window(span, warm_up) if window_s is None else window_s
    checked = max_drift is not None or max_failure_drift is not None
    section: dict[str, Any] = {
        "seconds": span,
        "warm_up_s": warm_up,
        "window_s": window,
        "significant_figures": SIGNIFICANT_FIGURES,
        "max_drift": max_drift,
        "max_failure_drift": max_failure_drift,
        "checked": checked,
    }
    if warm_up + 2 * window > span:
        reason = (
            f"not judged: {max(span - warm_up, 0)} whole seconds after a warm-up of "
            f"{warm_up} s, too few for two windows of {window} s"
        )
        problems = [f"drift {reason}"] if checked else []
        return {
            **section,
            "judged": False,
            "reason": reason,
            "passed": not problems,
            "problems": problems,
        }
    first = window_figures(seconds, failures, warm_up, warm_up + window)
    last = window_figures(seconds, failures, span - window, span)
    ratio, points, problems = _problems(first, last, max_drift, max_failure_drift)
    for key, empty in (("first", first), ("last", last)):
        if checked and empty["count"] == 0:  # a service that stopped answering: no pass
            problems.append(
                f"drift not judged: no request completed in the {key} window "
                f"s {empty['from_s']}-{empty['to_s']}"
            )
    windows = [
        window_figures(seconds, failures, start, min(start + window, span))
        for start in range(warm_up, span, window)
    ]
    return {
        **section,
        "judged": True,
        "reason": None,
        "first": first,
        "last": last,
        "ratio": None if ratio is None else round(ratio, 3),
        "failure_drift_pp": None if points is None else round(points, 3),
        "slope": p99_slope(windows),
        "windows": windows,
        "passed": not problems,
        "problems": problems,
    }


__all__ = [
    "MIN_WINDOW_S",
    "default_warm_up",
    "default_window",
    "judge",
    "line_fit",
    "p99_slope",
    "window_figures",
    "windows_fit",
]
