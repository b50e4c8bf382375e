"""Two load-test runs compared row by row, and the regressions a ``--compare`` judges.

Latency is judged on the histograms (microseconds, exact to 0.1 %) where both runs have
them, else on Locust's rounded milliseconds.
"""

from __future__ import annotations

import pandas as pd

from authzkit.loadtest.read.run import PERCENTILE_COLUMNS, RunResults, row_label
from authzkit.loadtest.read.spectrum import HISTOGRAM_COLUMNS, histogram_table
from authzkit.loadtest.read.units import duration

# Histogram p99 changes smaller than this are scheduling noise, not a regression.
MIN_HISTOGRAM_INCREASE_US = 100.0


def compare(run: RunResults, baseline: RunResults) -> pd.DataFrame:
    """Per row: baseline and current p50…p99, rps and failure ratio, in this run's row order.

    ``*_delta`` is current minus baseline; ``*_change`` the same relative to the baseline
    (NaN when the baseline is 0: Locust's millisecond buckets make sub-ms rows read 0).
    When both runs have histograms, :func:`compare_histograms`'s ``*_us_*`` columns are
    joined on (``row`` = ``"<type> <name>"``), and :func:`regressions` judges on them.
    """
    metrics = [*PERCENTILE_COLUMNS, "rps", "failure_ratio"]
    left = baseline.rows.set_index(["type", "name"])[metrics]
    right = run.rows.set_index(["type", "name"])[metrics]
    order = list(right.index) + [key for key in left.index if key not in right.index]
    joined = pd.merge(
        left,
        right,
        how="outer",
        left_index=True,
        right_index=True,
        suffixes=("_baseline", "_current"),
    ).reindex(order)
    for metric in metrics:
        joined[f"{metric}_delta"] = joined[f"{metric}_current"] - joined[f"{metric}_baseline"]
        if metric != "failure_ratio":
            base = joined[f"{metric}_baseline"]
            joined[f"{metric}_change"] = joined[f"{metric}_delta"] / base.where(base != 0)
    joined = joined.reset_index()
    joined["row"] = [row_label(k, n) for k, n in zip(joined["type"], joined["name"], strict=True)]
    histograms = compare_histograms(run, baseline)
    if histograms.empty:
        return joined
    return joined.merge(
        histograms.drop(columns=["count_baseline", "count_current"]), on="row", how="left"
    )


def compare_histograms(run: RunResults, baseline: RunResults) -> pd.DataFrame:
    """Per histogram row of either run: counts, p50 … p99.99 and max in microseconds,
    ``<p>_us_baseline``, ``<p>_us_current`` and ``<p>_us_change`` (relative to the
    baseline), in this run's row order. Empty unless both runs have histograms: a run from
    before them has only Locust's millisecond buckets (see :func:`compare`)."""
    if not run.histograms or not baseline.histograms:
        return pd.DataFrame(columns=["row", "count_baseline", "count_current"])
    left = histogram_table(baseline.histograms).set_index("row")
    right = histogram_table(run.histograms).set_index("row")
    order = list(right.index) + [row for row in left.index if row not in right.index]
    joined = pd.DataFrame(index=pd.Index(order, name="row"))
    joined["count_baseline"] = left["count"]
    joined["count_current"] = right["count"]
    for metric in [*HISTOGRAM_COLUMNS, "max"]:
        base, current = left[metric].reindex(order), right[metric].reindex(order)
        joined[f"{metric}_us_baseline"] = base
        joined[f"{metric}_us_current"] = current
        joined[f"{metric}_us_change"] = (current - base) / base.where(base != 0)
    return joined.reset_index()


def regressions(
    comparison: pd.DataFrame,
    *,
    max_latency_increase: float,
    max_failure_ratio_increase: float = 0.0,
    min_latency_increase_ms: float = 1.0,
    min_latency_increase_us: float = MIN_HISTOGRAM_INCREASE_US,
    histogram_percentiles: tuple[str, ...] = ("p99",),
) -> list[str]:
    """Readable lines for the rows that regressed: a latency grown by more than
    ``max_latency_increase`` (0.2 = 20 %), or a failure ratio grown by more than
    ``max_failure_ratio_increase``.

    Latency is judged on the histograms' ``histogram_percentiles`` (default p99, exact to
    0.1 %; a growth must also exceed ``min_latency_increase_us``) where both runs have the
    row's histogram, else on Locust's p95 (a growth must also exceed
    ``min_latency_increase_ms``, its resolution)."""
    found = []
    for _, row in comparison.iterrows():
        label = f"{row['type']} {row['name']}".strip()
        judged = [
            p
            for p in histogram_percentiles
            if pd.notna(row.get(f"{p}_us_baseline")) and pd.notna(row.get(f"{p}_us_current"))
        ]
        for metric in judged:
            base, current = row[f"{metric}_us_baseline"], row[f"{metric}_us_current"]
            change = row.get(f"{metric}_us_change")
            if (
                pd.notna(change)
                and change > max_latency_increase
                and current - base > min_latency_increase_us
            ):
                found.append(
                    f"{label}: {metric} {_shown(base)} → {_shown(current)} "
                    f"({change:+.0%}, limit +{max_latency_increase:.0%}; histograms)"
                )
        change, delta_ms = row.get("p95_change"), row.get("p95_delta")
        if (
            not judged
            and pd.notna(change)
            and change > max_latency_increase
            and delta_ms > min_latency_increase_ms
        ):
            found.append(
                f"{label}: p95 {row['p95_baseline']:.0f} → {row['p95_current']:.0f} ms "
                f"({change:+.0%}, limit +{max_latency_increase:.0%})"
            )
        delta = row.get("failure_ratio_delta")
        if pd.notna(delta) and delta > max_failure_ratio_increase:
            found.append(
                f"{label}: failure ratio {row['failure_ratio_baseline']:.2%} → "
                f"{row['failure_ratio_current']:.2%}"
            )
    return found


def _shown(microseconds: float) -> str:
    return duration(microseconds) or "n/a"  # every latency as units.duration writes it


def format_comparison(comparison: pd.DataFrame) -> str:
    """Deltas of p50/p95/p99 and throughput as aligned text, and of the histograms' p99 and
    p99.9 (µs) when both runs have them."""
    columns = ["type", "name"]
    for metric in ("p50", "p95", "p99", "rps"):
        columns += [f"{metric}_baseline", f"{metric}_current", f"{metric}_change"]
    for metric in ("p99_us", "p99.9_us"):
        if f"{metric}_change" in comparison:
            columns += [f"{metric}_baseline", f"{metric}_current", f"{metric}_change"]
    shown = comparison[columns].copy()
    for column in [c for c in columns if c.endswith("_change")]:
        shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:+.0%}")
    text: str = shown.to_string(index=False, float_format=lambda v: f"{v:.1f}")
    return text


__all__ = [
    "MIN_HISTOGRAM_INCREASE_US",
    "compare",
    "compare_histograms",
    "format_comparison",
    "regressions",
]
