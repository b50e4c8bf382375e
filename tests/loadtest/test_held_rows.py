"""The rows of calls the schedule ended itself are told a batch at a time: none while few
are held and the first is young, all of them once enough are held or the first waited long
enough, only as many as the room before the next start allows (yet never more than a batch
left held), every one at the end, and none twice."""

from __future__ import annotations

import time
from typing import Any

import pytest

from authzkit.loadtest.record.timing import ROWS_HELD_S, ROWS_TOLD_TOGETHER, HeldRows

FAR = float("inf")  # no start soon


class Row:
    """A held call's stand-in: notes when its row was told."""

    def __init__(self, told: list[int], number: int, intended_at: float) -> None:
        self.told, self.number, self.intended_at = told, number, intended_at

    def tell(self, answer: Any) -> None:
        self.told.append(self.number)


def rows_held(count: int, age: float = 0.0) -> tuple[HeldRows, list[int]]:
    told: list[int] = []
    rows = HeldRows()
    for number in range(count):
        rows.add(Row(told, number, time.perf_counter() - age), None)  # type: ignore[arg-type]
    return rows, told


def test_a_few_young_rows_wait_for_more() -> None:
    rows, told = rows_held(ROWS_TOLD_TOGETHER - 1)
    rows.tell(FAR)
    assert told == [] and len(rows) == ROWS_TOLD_TOGETHER - 1


def test_a_batch_is_told_in_order_of_the_answers() -> None:
    rows, told = rows_held(ROWS_TOLD_TOGETHER)
    rows.tell(FAR)
    assert told == list(range(ROWS_TOLD_TOGETHER)) and len(rows) == 0


def test_a_row_that_waited_long_enough_is_told_with_those_after_it() -> None:
    rows, told = rows_held(3, age=ROWS_HELD_S * 2)
    rows.tell(FAR)
    assert told == [0, 1, 2]


def test_with_no_room_before_the_next_start_only_those_beyond_a_batch_are_told() -> None:
    rows, told = rows_held(ROWS_TOLD_TOGETHER + 5)
    rows.tell(0.0)  # the next start is due: the room is gone
    assert told == [0, 1, 2, 3, 4] and len(rows) == ROWS_TOLD_TOGETHER
    rows.tell(FAR)  # a later wake with room: the rest
    assert told == list(range(ROWS_TOLD_TOGETHER + 5))


def test_every_held_row_is_told_at_the_end() -> None:
    rows, told = rows_held(2)
    rows.tell_all()
    assert told == [0, 1] and len(rows) == 0


def test_a_row_whose_telling_raised_is_not_told_again(monkeypatch: pytest.MonkeyPatch) -> None:
    rows, told = rows_held(ROWS_TOLD_TOGETHER)
    failing = Row(told, -1, time.perf_counter())

    def raises(answer: Any) -> None:
        told.append(-1)
        raise RuntimeError("a listener failed")

    failing.tell = raises  # type: ignore[method-assign]
    rows.add(failing, None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        rows.tell(FAR)
    rows.tell_all()
    assert told.count(-1) == 1 and sorted(told)[1:] == list(range(ROWS_TOLD_TOGETHER))
