"""A capacity search's numbers: a merged step read into a :class:`StepResult`, and the files
the search leaves: ``capacity.json`` (the answer, the SLO, the settings, every step) and
``capacity_histograms.json``, written as it goes (docs/internals.md, "A search's
numbers").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from authzkit.loadtest.capacity.search import Answer, Search, Slo, StepResult, Verdict

CAPACITY_FILE = "capacity.json"
HISTOGRAMS_FILE = "capacity_histograms.json"


def step_result(merged: Mapping[str, Any]) -> StepResult:
    """One merged step (:func:`~authzkit.loadtest.record.steps.merge_parts`) as measured."""
    from authzkit.loadtest.record.face import decode, values_at

    latency, lag = decode(merged["latency"]), decode(merged["lag"])
    window = float(merged["window_s"]) or 1.0
    requests = int(latency.get_total_count())

    def ms(histogram: Any, percent: float) -> float:
        return values_at(histogram, [percent])[percent] / 1000.0

    return StepResult(
        index=int(merged["index"]),
        offered_per_s=float(merged["rate"]),
        achieved_per_s=int(merged.get("answered", requests)) / window,
        requests=requests,
        failures=int(merged.get("failures", 0)),
        p50_ms=ms(latency, 50.0),
        p99_ms=ms(latency, 99.0),
        p999_ms=ms(latency, 99.9),
        lag_p99_ms=ms(lag, 99.0),
        cap_reached=int(merged.get("cap_reached", 0)),
        censored=int(merged.get("censored", 0)),
        in_flight=int(merged.get("in_flight", 0)),
        processes=int(merged.get("parts", 1)),
    )


def step_record(verdict: Verdict) -> dict[str, Any]:
    """A judged step as ``capacity.json`` lists it."""
    result = verdict.result
    return {
        "index": result.index,
        "offered_per_s": round(result.offered_per_s, 3),
        "achieved_per_s": round(result.achieved_per_s, 3),
        "requests": result.requests,
        "failures": result.failures,
        "failure_ratio": round(result.failure_ratio, 6),
        "p50_ms": round(result.p50_ms, 3),
        "p99_ms": round(result.p99_ms, 3),
        "p99.9_ms": round(result.p999_ms, 3),
        "lag_p99_ms": round(result.lag_p99_ms, 3),
        "cap_reached": result.cap_reached,
        "censored": result.censored,
        "processes": result.processes,
        "verdict": verdict.verdict,
        "why": verdict.why,
    }


def capacity_document(
    *,
    slo: Slo,
    search: Search,
    settings: Mapping[str, Any],
    steps: Sequence[Verdict],
    found: Answer | None,
    interrupted: str | None = None,
) -> dict[str, Any]:
    """``capacity.json``'s content: the answer (None while or when the search did not end),
    the SLO, the search's settings and every judged step."""
    document: dict[str, Any] = {
        "capacity_per_s": None if found is None else found.capacity_per_s,
        "limited_by": None if found is None else found.limited_by,
        "why": None if found is None else found.why,
        "knee_per_s": None if found is None else found.knee_per_s,
        "slo": {
            "max_p99_ms": slo.max_p99_ms,
            "max_p999_ms": slo.max_p999_ms,
            "max_failure_ratio": slo.max_failure_ratio,
        },
        "search": {
            "start_rate": search.start_rate,
            "max_rate": search.max_rate,
            "precision": search.precision,
            **settings,
        },
        "steps": [step_record(step) for step in steps],
        "complete": found is not None,
    }
    if found is not None and found.processes_needed is not None:
        document["generator"] = {
            "per_process_max_per_s": round(found.per_process_max_per_s or 0.0, 3),
            "processes_needed": found.processes_needed,
        }
    if interrupted is not None:
        document["interrupted"] = interrupted
    return document


def write_json(path: Path, content: Any) -> Path:
    """Write ``content`` so a reader never sees half a file (rename is atomic)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def read_capacity(directory: str | Path) -> dict[str, Any]:
    """``capacity.json`` of a run directory; a ``FileNotFoundError`` naming it when absent."""
    path = Path(directory) / CAPACITY_FILE
    if not path.exists():
        raise FileNotFoundError(f"{directory} holds no {CAPACITY_FILE}: not a capacity run")
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def is_capacity_run(directory: str | Path) -> bool:
    """Whether ``directory`` is what ``authzkit capacity --out`` wrote."""
    return (Path(directory) / CAPACITY_FILE).exists()


def _slo(document: dict[str, Any]) -> Slo:
    slo = document["slo"]
    return Slo(slo["max_p99_ms"], slo.get("max_p999_ms"), slo["max_failure_ratio"])


def summary_lines(document: dict[str, Any]) -> list[str]:
    """The last lines: the capacity, the SLO it was judged against, what limited it."""
    capacity = document.get("capacity_per_s")
    judged = _slo(document).describe()
    if not document.get("complete"):
        steps = len(document.get("steps", []))
        return [f"capacity: not found (the search stopped after {steps} step(s)); SLO {judged}"]
    found = "none" if capacity is None else f"{capacity:,.4g}/s"
    return [
        f"capacity: {found} (SLO {judged})",
        f"limited by: {document['limited_by']}: {document['why']}",
    ]


__all__ = [
    "CAPACITY_FILE",
    "HISTOGRAMS_FILE",
    "capacity_document",
    "is_capacity_run",
    "read_capacity",
    "step_record",
    "step_result",
    "write_json",
]
