"""The end of a run in numbers: the ``--summary-file`` content and the threshold verdict.

Pure functions of the totals Locust hands over at exit, free of locust, so the verdict that
decides a CI job's exit code is tested in-process.
"""

from __future__ import annotations

from typing import Any


def threshold_problems(*, p95_ms: float, failure_ratio: float, max_p95_ms: float | None,
                       max_failure_ratio: float | None) -> list[str]:
    """Readable lines for every threshold the run broke (empty when it passed)."""
    problems = []
    if max_p95_ms is not None and p95_ms > max_p95_ms:
        problems.append(f"p95 {p95_ms:.0f} ms > --max-p95-ms {max_p95_ms:g}")
    if max_failure_ratio is not None and failure_ratio > max_failure_ratio:
        problems.append(f"failure ratio {failure_ratio:.4f} > --max-failure-ratio "
                        f"{max_failure_ratio:g}")
    return problems


def run_summary(*, requests: int, failures: int, p95_ms: float, errors: list[dict[str, Any]],
                counters: list[dict[str, int]], max_p95_ms: float | None,
                max_failure_ratio: float | None) -> dict[str, Any]:
    """The ``--summary-file`` content: failures, token-provider counters summed over the
    processes (``rejected_401`` from the failures), and the threshold verdict."""
    provider = {key: sum(c.get(key, 0) for c in counters) for key in ("token_calls", "refreshes")}
    provider["processes"] = len(counters)
    provider["rejected_401"] = sum(e["occurrences"] for e in errors if "HTTP 401" in e["error"])
    ratio = failures / requests if requests else (1.0 if failures else 0.0)
    problems = threshold_problems(p95_ms=p95_ms, failure_ratio=ratio, max_p95_ms=max_p95_ms,
                                  max_failure_ratio=max_failure_ratio)
    return {"requests": requests, "failures_total": failures, "failures": errors,
            "token_provider": provider,
            "thresholds": {"max_p95_ms": max_p95_ms, "max_failure_ratio": max_failure_ratio,
                           "p95_ms": p95_ms, "failure_ratio": ratio,
                           "checked": max_p95_ms is not None or max_failure_ratio is not None,
                           "passed": not problems, "problems": problems}}


__all__ = ["run_summary", "threshold_problems"]
