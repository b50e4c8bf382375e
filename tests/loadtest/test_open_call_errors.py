"""An open-model call that raises outside its request's row (a bug in a user's subclass,
say) is reported as a closed-loop task's exception is: once in Locust's exceptions table
and log, with its traceback, while the schedule goes on sending every start."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from authzkit.sandbox.process import SandboxProcess

from support.loadtest import locust

RAISING_USER = """
from authzkit.loadtest.record.users import OpenAuthorizeUser

calls = [0]


class RaisingOpenAuthorizeUser(OpenAuthorizeUser):
    def on_start(self):
        super().on_start()
        self.user_tasks.open_call().send_now = lambda *args: False  # each call a greenlet

    def _call(self, intended_at):
        super()._call(intended_at)
        calls[0] += 1
        if calls[0] in (4, 8, 12, 16, 20):  # well before the schedule ends
            raise ValueError("a bug outside the request path")
"""


@pytest.mark.slow
def test_a_call_that_raises_is_an_exception_row_and_the_schedule_goes_on(
    sandbox_process: SandboxProcess, tmp_path: Path
) -> None:
    locustfile = tmp_path / "raising.py"
    locustfile.write_text(RAISING_USER)
    out = tmp_path / "out"
    run = locust(
        locustfile,
        ["RaisingOpenAuthorizeUser"],
        host=sandbox_process.base_url,
        out=out,
        users=1,
        run_time="2s",
        extra=["--rate", "20", "--csv", str(out / "locust")],
    )
    schedule = run.summary["schedule"]
    assert schedule["sent"] == schedule["intended"] == 40  # every start, errors or not
    assert run.row("POST", "authorize")["num_requests"] == 40
    with (out / "locust_exceptions.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["Count"], row["Message"]) for row in rows] == [
        ("5", "a bug outside the request path")
    ]
    assert run.output.count("ValueError: a bug outside the request path") == 5
