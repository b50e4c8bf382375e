"""The ten fault settings, defined once: every command, keyword and process that takes them
takes the same names, flags, defaults and checks, and the seed has one name."""

from __future__ import annotations

import argparse
import ast
import inspect
import warnings
from pathlib import Path
from typing import get_type_hints

import pytest

import authzkit
from authzkit.cli.main import build_parser
from authzkit.sandbox.arguments import add_sandbox_arguments, faults_from_args
from authzkit.sandbox.faults import FAULT_SETTINGS, FaultOptions, Faults
from authzkit.sandbox.process import SandboxProcess
from authzkit.testing.settings import known_settings, parse_settings
from authzkit.wire.errors import ConfigError

NAMES = [
    "latency_ms",
    "error_rate",
    "fault_seed",
    "token_outage",
    "rotate_keys_every",
    "pause_every",
    "pause_ms",
    "service_time_us",
    "concurrency",
    "degrade_ms_per_min",
]


def _fault_actions(command: str) -> dict[str, argparse.Action]:
    parser = build_parser([command]).commands[command]
    return {a.dest: a for a in parser._actions if a.dest in NAMES}


def test_the_ten_settings_are_the_fields_and_the_keywords() -> None:
    assert [s.name for s in FAULT_SETTINGS] == NAMES
    assert list(get_type_hints(FaultOptions)) == NAMES  # Sandbox(...)'s fault keywords
    assert "fault_seed" in get_type_hints(Faults) and "seed" not in get_type_hints(Faults)


@pytest.mark.parametrize("command", ["sandbox", "loadtest", "capacity"])
def test_every_command_that_starts_a_sandbox_offers_every_flag_as_defined(command: str) -> None:
    actions = _fault_actions(command)
    assert list(actions) == NAMES
    for setting in FAULT_SETTINGS:
        action = actions[setting.name]
        assert action.option_strings == [setting.flag]
        assert (action.default, action.metavar, action.help) == (
            setting.default,
            setting.metavar,
            setting.help,
        )


def test_the_marker_takes_every_setting_and_refuses_as_the_command_does() -> None:
    assert set(NAMES) <= set(known_settings())
    with pytest.raises(ConfigError, match=r"^marker: fault_seed: must be a whole number, got 'x'"):
        parse_settings({"fault_seed": "x"}, where="marker")
    settings = parse_settings({"fault_seed": 7, "latency_ms": "5-9"}, where="marker")
    assert Faults.of(**{n: settings[n] for n in NAMES}) == Faults.of(
        fault_seed=7, latency_ms=(5, 9)
    )


@pytest.mark.parametrize(
    ("given", "python", "flags"),
    [
        (
            {"pause_every": 5},
            "pause_ms is required with pause_every",
            "--pause-ms is required with --pause-every",
        ),
        ({"error_rate": 2}, "error_rate must be a ratio", "--error-rate must be a ratio"),
        (
            {"pause_every": 1, "pause_ms": 1000},
            "pause_ms must be shorter than the period (pause_every = 1 s)",
            "--pause-ms must be shorter than the period (--pause-every = 1 s)",
        ),
    ],
)
def test_a_bad_value_is_named_as_it_was_given(
    given: dict[str, float], python: str, flags: str
) -> None:
    with pytest.raises(ConfigError) as by_keyword:
        Faults.of(**given)
    assert str(by_keyword.value).startswith(python)
    with pytest.raises(ConfigError) as by_flag:
        Faults.checked(given, flags=True)
    assert str(by_flag.value).startswith(flags)


def test_a_sandbox_process_passes_its_faults_on_as_the_command_reads_them() -> None:
    given = {
        "latency_ms": "50-200",
        "error_rate": 0.1,
        "fault_seed": 3,
        "pause_every": 5,
        "pause_ms": 500,
        "service_time_us": 1500,
    }
    process = SandboxProcess(**given)  # type: ignore[arg-type]
    assert process.process is None  # nothing started: the argv is what it would run
    parser = argparse.ArgumentParser()
    add_sandbox_arguments(parser)
    parsed = parser.parse_args(process.faults.arguments())
    assert faults_from_args(parsed) == Faults.of(**given) == process.faults
    assert Faults.of(**given).given() == {**given, "pause_every": 5.0, "pause_ms": 500.0}
    with pytest.raises(ConfigError, match="pause_ms is required"):
        SandboxProcess(pause_every=5)


def test_the_seed_has_one_name_and_the_former_one_warns() -> None:
    with pytest.warns(
        DeprecationWarning, match=r"Faults\.of\(seed=\.\.\.\) is deprecated"
    ) as caught:
        faults = Faults.of(error_rate=0.5, seed=7)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert faults == Faults.of(error_rate=0.5, fault_seed=7)
    with pytest.warns(DeprecationWarning, match=r"Faults\.seed is deprecated.*fault_seed"):
        assert faults.seed == 7
    with pytest.raises(TypeError, match="fault_seed only"):
        Faults.of(seed=1, fault_seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert faults.describe() == "503 rate 0.5 (seed 7)"  # today's name warns nothing


def test_an_unknown_fault_keyword_is_refused() -> None:
    with pytest.raises(TypeError, match="'latency'"):
        Faults.of(latency=5)


def test_the_sandbox_command_module_is_imported_by_the_dispatcher_only() -> None:
    package = Path(inspect.getfile(authzkit)).parent
    importers = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if isinstance(node, ast.ImportFrom) and node.module == "authzkit.sandbox":
                named += [f"authzkit.sandbox.{a.name}" for a in node.names]
            if "authzkit.sandbox.command" in named:
                importers.append(path.relative_to(package).as_posix())
    assert importers == []
    assert "authzkit.sandbox.command" in build_parser.__globals__["COMMAND_MODULES"]
