"""Hand-made run directories for the report tests: Locust's ``stats.json`` entries of known
response times (``entry``, ``write_run``) and HdrHistograms of known values
(``write_histograms``), so every expected percentile is known exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from authzkit.loadtest.record.histograms import encode_rows, new_histogram
from authzkit.loadtest.record.summary import SERVICE_HISTOGRAM_FILE

START = 1_800_000_000


def entry(
    method: str, name: str, times: dict[int, int], failures: int = 0, seconds: int = 4
) -> dict[str, Any]:
    requests = sum(times.values())
    per_second = {str(START + s): requests // seconds for s in range(seconds)}
    return {
        "name": name,
        "method": method,
        "start_time": START,
        "last_request_timestamp": START + seconds,
        "num_requests": requests,
        "num_none_requests": 0,
        "num_failures": failures,
        "total_response_time": float(sum(ms * n for ms, n in times.items())),
        "max_response_time": float(max(times)),
        "min_response_time": float(min(times)),
        "total_content_length": 0,
        "response_times": {str(k): v for k, v in times.items()},
        "num_reqs_per_sec": per_second,
        "num_fail_per_sec": {str(START): failures} if failures else {},
    }


def write_run(directory: Path, *, slow: int = 0, failures: int = 0) -> Path:
    directory.mkdir(parents=True)
    entries = [
        entry("POST", "token", {5: 2}),
        entry("POST", "authorize", {10: 90, 20 + slow: 8, 50 + slow: 2}, failures=failures),
    ]
    (directory / "stats.json").write_text(json.dumps(entries))
    errors = [
        {
            "type": "POST",
            "name": "authorize",
            "occurrences": failures,
            "error": "RequestFailure('HTTP 403 srn:error:unauthorized')",
        }
    ]
    (directory / "summary.json").write_text(
        json.dumps({"failures": errors if failures else [], "thresholds": {}})
    )
    (directory / "sandbox_stats.json").write_text(json.dumps({"tokens_issued": 2}))
    (directory / "run.json").write_text(json.dumps({"scenario": "authorize", "users": 5}))
    return directory


AUTHORIZE = "POST authorize"
TOKEN = "POST token"


def histogram(values: dict[int, int]) -> HdrHistogram:
    """A microsecond histogram holding ``count`` times each ``value`` of ``values``."""
    built = new_histogram()
    for value, count in values.items():
        built.record_value(value, count)
    return built


def write_histograms(
    directory: Path,
    latency: dict[str, dict[int, int]],
    service: dict[str, dict[int, int]] | None = None,
    layout: str = "flat",
) -> Path:
    """``histograms.json`` as the run wrote it: flat (row → encoding); under the open model
    either nested (``{"latency", "service_time"}``) or with a second file beside it."""
    encoded = encode_rows({row: histogram(values) for row, values in latency.items()})
    services = encode_rows({row: histogram(v) for row, v in (service or {}).items()})
    if layout == "nested":
        content: dict[str, Any] = {"latency": encoded, "service_time": services}
    else:
        content = encoded
        if services:
            (directory / SERVICE_HISTOGRAM_FILE).write_text(json.dumps(services))
    (directory / "histograms.json").write_text(json.dumps(content))
    return directory
