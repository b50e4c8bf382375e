"""One plan per run, built once: the parsed options stay as parsed, the plan cannot change,
both commands' run.json keys mean one thing, and the process that drives a run reaches the
recording package through its face only. In-process (no Locust, no sandbox)."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
from pathlib import Path

import pytest

from authzkit.cli.main import build_parser
from authzkit.loadtest.plan import plan_run, plan_search
from authzkit.loadtest.read.run import load_run
from authzkit.loadtest.run_directory import run_json
from authzkit.loadtest.soak import SOAK_RATE, SOAK_RUN_TIME

PACKAGE = Path(__file__).resolve().parents[2] / "authzkit" / "loadtest"
# Modules of the process that starts Locust (the readers of finished runs are read/).
DRIVING = [
    *(PACKAGE / name for name in ("command.py", "plan.py", "driver.py", "child.py")),
    *(PACKAGE / name for name in ("roles.py", "resources.py", "preflight.py", "arguments.py")),
    *(PACKAGE / name for name in ("progress.py", "run_directory.py", "soak.py")),
    *sorted((PACKAGE / "capacity").glob("*.py")),
]


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_soak_presets_reach_the_plan_and_leave_the_options_as_parsed(no_authzkit_env: None) -> None:
    args = parsed("loadtest", "--soak", "--processes", "2")
    before = vars(args).copy()
    plan = plan_run(args, {})
    assert vars(args) == before
    assert (plan.load.run_time, plan.load.rate) == (SOAK_RUN_TIME, SOAK_RATE)
    assert plan.user_class == "OpenAuthorizeUser"
    assert plan.load.users == 2  # the open model: one scheduling user per process
    assert plan.faults.rotate_keys_every == 300.0 and plan.token_ttl == 60
    assert plan.soak and plan.soak_presets[0] == f"-t {SOAK_RUN_TIME}"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.load = plan.load  # type: ignore[misc]


def test_both_commands_write_run_json_with_the_same_meaning(no_authzkit_env: None) -> None:
    loadtest = run_json(plan_run(parsed("loadtest", "-u", "3", "--fast"), {}))
    capacity_args = parsed("capacity", "--max-p99-ms", "50", "--start-rate", "20")
    capacity = run_json(plan_search(capacity_args, rate=20.0, run_time="90s", environ={}))
    assert (loadtest["command"], loadtest["users"], loadtest["user_class"]) == (
        "loadtest",
        3,
        "FastAuthorizeUser",
    )
    assert (capacity["command"], capacity["rate"], capacity["user_class"]) == (
        "capacity",
        20.0,
        "OpenAuthorizeUser",
    )
    assert "locust_command" not in loadtest  # the driver adds the child's argv once known


def test_a_run_directory_of_the_previous_layout_reads_with_todays_keys(tmp_path: Path) -> None:
    argv = ["-f", "locustfile.py", "--headless"]
    (tmp_path / "run.json").write_text(json.dumps({"scenario": "authorize", "command": argv}))
    meta = load_run(tmp_path).meta
    assert (meta["command"], meta["locust_command"]) == ("loadtest", argv)


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("path", DRIVING, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_the_driving_side_uses_the_recording_package_through_its_face(path: Path) -> None:
    inside = {m for m in _imported(path) if m.startswith("authzkit.loadtest.record")}
    assert inside <= {"authzkit.loadtest.record.face"}, inside
    if path.parent.name == "capacity":
        assert "authzkit.loadtest.command" not in _imported(path)
