"""The search's reasoning on given step results: each verdict and the line that says why,
the rates it probes and bisects, and the answer with what limited it (no process, no
clock: what the search decides from what it measured)."""

from __future__ import annotations

import pytest

from authzkit.loadtest.capacity import Search, Slo, StepResult, answer, judge
from authzkit.loadtest.capacity.output import exit_code
from authzkit.loadtest.capacity.search import BROKE, HELD, LAGGED, Verdict

SLO = Slo(max_p99_ms=50.0, max_p999_ms=200.0, max_failure_ratio=0.01)


def measured(
    rate: float,
    *,
    p99: float = 10.0,
    p999: float = 20.0,
    failures: int = 0,
    lag: float = 0.5,
    cap: int = 0,
    achieved: float | None = None,
    processes: int = 1,
) -> StepResult:
    return StepResult(
        index=0,
        offered_per_s=rate,
        achieved_per_s=rate if achieved is None else achieved,
        requests=1000,
        failures=failures,
        p50_ms=p99 / 2,
        p99_ms=p99,
        p999_ms=p999,
        lag_p99_ms=lag,
        cap_reached=cap,
        processes=processes,
    )


def test_a_step_holds_when_every_slo_holds() -> None:
    verdict = judge(measured(100), SLO)
    assert (verdict.verdict, verdict.why) == (HELD, "every SLO held")


@pytest.mark.parametrize(
    ("result", "why"),
    [
        (measured(100, p99=75.0), "p99 75 ms > --max-p99-ms 50"),
        (measured(100, p999=250.0), "p99.9 250 ms > --max-p999-ms 200"),
        (measured(100, failures=20), "failure ratio 0.0200 > --max-failure-ratio 0.01"),
    ],
)
def test_a_step_breaks_naming_the_figure_past_its_limit(result: StepResult, why: str) -> None:
    verdict = judge(result, SLO)
    assert (verdict.verdict, verdict.why) == (BROKE, why)


def test_a_break_the_generators_lag_explains_is_not_the_services() -> None:
    # p99 60 ms with a schedule lag of 15 ms: without the lag 45 ms, within 50 ms.
    verdict = judge(measured(100, p99=60.0, lag=15.0), SLO)
    assert verdict.verdict == LAGGED
    assert "generator fell behind" in verdict.why and "p99 60 ms" in verdict.why


def test_a_service_far_past_its_limit_broke_whatever_the_lag() -> None:
    assert judge(measured(100, p99=900.0, lag=15.0), SLO).verdict == BROKE


def test_starts_held_back_by_the_in_flight_cap_are_the_services_doing() -> None:
    assert judge(measured(100, p99=60.0, lag=15.0, cap=3), SLO).verdict == BROKE


def test_failures_break_a_step_even_when_the_generator_lagged() -> None:
    assert judge(measured(100, failures=500, lag=40.0), SLO).verdict == BROKE


def run_search(search: Search, capacity: float) -> tuple[list[float], list[Verdict]]:
    """The rates a search offers against a service that holds up to ``capacity``."""
    rates: list[float] = []
    steps: list[Verdict] = []
    while (rate := search.next_rate(steps)) is not None:
        rates.append(rate)
        steps.append(judge(measured(rate, p99=10.0 if rate <= capacity else 500.0), SLO))
    return rates, steps


def test_the_search_doubles_until_a_step_breaks_then_bisects_to_the_precision() -> None:
    search = Search(start_rate=10.0, precision=0.05)
    rates, steps = run_search(search, capacity=190.0)
    assert rates[:6] == [10, 20, 40, 80, 160, 320]
    assert rates[6:] == [240, 200, 180, 190, 195]
    found = answer(steps, search)
    assert (found.capacity_per_s, found.limited_by, found.knee_per_s) == (190, "service", 195)
    assert found.why.startswith("the SLO broke at 195/s: p99 500 ms > --max-p99-ms 50")


def test_max_rate_caps_every_step_and_limits_the_answer() -> None:
    search = Search(start_rate=10.0, max_rate=50.0)
    rates, steps = run_search(search, capacity=1000.0)
    assert rates == [10, 20, 40, 50]
    found = answer(steps, search)
    assert (found.capacity_per_s, found.limited_by) == (50, "max-rate")


def test_when_the_first_step_breaks_there_is_no_capacity() -> None:
    search = Search(start_rate=10.0)
    rates, steps = run_search(search, capacity=5.0)
    assert rates == [10]
    found = answer(steps, search)
    assert found.capacity_per_s is None
    assert found.why == "the lowest rate broke the SLO: p99 500 ms > --max-p99-ms 50"


def test_a_lagging_generator_ends_the_search_and_says_how_many_processes_it_takes() -> None:
    search = Search(start_rate=100.0)
    steps = [
        judge(measured(100, processes=2), SLO),
        judge(measured(200, processes=2), SLO),
        judge(measured(400, p99=60.0, lag=20.0, achieved=300.0, processes=2), SLO),
    ]
    assert search.next_rate(steps) is None
    found = answer(steps, search)
    assert (found.capacity_per_s, found.limited_by) == (200, "generator")
    # 150/s per process at best; the next probe (800/s) needs 6 of them.
    assert (found.per_process_max_per_s, found.processes_needed) == (150, 6)
    assert "--processes 6" in found.why


def test_the_exit_code_says_whether_a_capacity_was_found() -> None:
    found = {"capacity_per_s": 190.0, "why": "the SLO broke at 195/s"}
    assert exit_code(found, None) == (0, None)
    assert exit_code(found, 150.0) == (0, None)
    assert exit_code(found, 200.0) == (1, "capacity 190/s is below --min-capacity 200")
    none = {"capacity_per_s": None, "why": "the lowest rate broke the SLO: p99 75 ms > …"}
    assert exit_code(none, None) == (1, "no capacity: the lowest rate broke the SLO: p99 75 ms > …")
