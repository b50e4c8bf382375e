"""Which percentiles a run reports, listed once: every table, file and plot takes its own
list from here, and :func:`key` names each (``p50``, ``p99.9``).

The lists differ on purpose: the summary's histograms are exact to 0.1 % (p99.9 is
meaningful), the report's spectrum goes one nine further, a single second holds too few
requests for more than p50 and p99, and a run without histograms has only Locust's rounded
millisecond buckets, read by nearest rank at the percentiles Locust itself shows.
"""

from __future__ import annotations


def key(percent: float) -> str:
    """The name of a percentile in every file and table: ``p50``, ``p99.9``, ``p99.99``."""
    return f"p{percent:g}"


SUMMARY = (50.0, 90.0, 99.0, 99.9)  # summary.json's latency_us, from the histograms
SPECTRUM = (*SUMMARY, 99.99)  # the report's histogram table and its "nines" axis
PER_SECOND = (50.0, 99.0)  # each second of timeline.json
LOCUST = (50.0, 90.0, 95.0, 99.0)  # runs without histograms: Locust's buckets, nearest rank
COMPARED = (50.0, 99.0, 99.9)  # the report's comparison with a baseline, a cell each

__all__ = ["COMPARED", "LOCUST", "PER_SECOND", "SPECTRUM", "SUMMARY", "key"]
