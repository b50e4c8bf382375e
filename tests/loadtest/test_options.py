"""``authzkit.shared.options``: each shared option's type and range, as argparse reports them
(one line, exit 2), and the output-path check that runs before anything is written."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.shared import options
from authzkit.wire.actions import ACTIONS
from authzkit.wire.children import child_env
from authzkit.wire.errors import ConfigError


def parser() -> argparse.ArgumentParser:
    built = argparse.ArgumentParser(prog="x")
    built.add_argument("--count", type=options.count(1, also=(-1,)))
    built.add_argument("--ratio", type=options.ratio)
    built.add_argument("--run-time", type=options.run_time)
    built.add_argument("--out", type=options.output_directory)
    built.add_argument("--file", type=options.output_file_or_stdout)
    options.add_token_ttl(built, None, "ttl")
    options.add_load_options(built)  # the checks are the definitions', not a command's
    return built


@pytest.mark.parametrize(
    ("argv", "value"),
    [
        (["--count", "-1"], ("count", -1)),
        (["--count", "3"], ("count", 3)),
        (["--ratio", "0"], ("ratio", 0.0)),
        (["--ratio", "1"], ("ratio", 1.0)),
        (["--run-time", "1h30m"], ("run_time", "1h30m")),
        (["--token-ttl", "1"], ("token_ttl", 1)),
        (["--file", "-"], ("file", "-")),
    ],
)
def test_good_values_pass(argv: list[str], value: tuple[str, object]) -> None:
    assert getattr(parser().parse_args(argv), value[0]) == value[1]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--count", "0"], "argument --count: must be a whole number >= 1 (or -1), got 0"),
        (["--ratio", "1.01"], "argument --ratio: must be a ratio >= 0 and <= 1, got 1.01"),
        (["--run-time", "0"], "argument --run-time: must be at least 1s"),
        (["--token-ttl", "0"], "argument --token-ttl: must be a whole number of seconds >= 1"),
        (["--out", "/proc/x"], "argument --out: /proc/x: cannot write in /proc"),
        (["--arrivals", "burst"], "argument --arrivals: invalid choice: 'burst'"),
        (["--arrivals-seed", "-1"], "argument --arrivals-seed: must be a whole number >= 0"),
        (["--max-in-flight", "0"], "argument --max-in-flight: must be a whole number >= 1"),
        (["--subjects", "absent.csv"], "argument --subjects: absent.csv: no such file"),
        (["--wait-time", "2-1"], "argument --wait-time: think time needs 0 <= low <= high"),
    ],
)
def test_bad_values_are_one_argparse_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        parser().parse_args(argv)
    assert refused.value.code == 2
    assert words in capsys.readouterr().err.splitlines()[-1]


def test_output_paths(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    deep = tmp_path / "new" / "deeper" / "report.json"
    assert options.check_output_path(deep) == deep  # its folders can be created
    assert not (tmp_path / "new").exists()  # checking wrote nothing
    assert options.check_output_path(tmp_path, directory=True) == tmp_path  # may exist
    for path, directory, words in [
        (tmp_path, False, "is a directory"),
        (tmp_path / "file.txt", True, "not a directory"),
        (tmp_path / "file.txt" / "x", False, "is not a directory"),
        (Path("/proc/x.md"), False, "cannot write in /proc"),
    ]:
        with pytest.raises(ConfigError, match=words):
            options.check_output_path(path, directory=directory)


# -- the load options: one definition, every parser ----------------------------------------

THRESHOLDS = (  # not in Locust's web form
    "--max-p95-ms",
    "--max-p99-ms",
    "--max-p999-ms",
    "--max-failure-ratio",
    "--max-lag-ms",
    "--max-drift",
    "--max-failure-drift",
    "--drift-window",
    "--warm-up",
)
SHARED = (
    *THRESHOLDS,
    "--rate",
    "--arrivals",
    "--arrivals-seed",
    "--max-in-flight",
    "--subjects",
    "--wait-time",
)
# Run in a child: importing locust monkey-patches the process with gevent.
# A value of each that its definition refuses, whichever parser checks it.
BAD = {
    "--max-p95-ms": "0",
    "--max-p99-ms": "0",
    "--max-p999-ms": "-1",
    "--max-failure-ratio": "1.5",
    "--max-lag-ms": "-1",
    "--max-drift": "0.5",
    "--max-failure-drift": "101",
    "--drift-window": "0",
    "--warm-up": "-1",
    "--rate": "0",
    "--arrivals": "burst",
    "--arrivals-seed": "-1",
    "--max-in-flight": "0",
    "--subjects": "absent.csv",
    "--wait-time": "2-1",
}
# Run in a child: importing locust monkey-patches the process with gevent.
_LOCUST_SIDE = """
import contextlib, io, json, sys
from locust.argument_parser import get_parser
from authzkit.loadtest.record import users
from authzkit.shared.options import LOAD_OPTIONS

def refusal(argv):
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        try:
            get_parser().parse_args(["-f", users.__file__, *argv])
        except SystemExit as exit:
            return [exit.code, said.getvalue().splitlines()[-1].split("error: ", 1)[-1]]
    return [0, ""]

actions = {a.option_strings[-1]: a for a in get_parser()._actions if a.option_strings}
print(json.dumps({
    flag: {
        "help": actions[flag].help,
        "default": actions[flag].default,
        "metavar": actions[flag].metavar,
        "choices": list(actions[flag].choices or []),
        "type_is_the_definition's": actions[flag].type is LOAD_OPTIONS[flag].type,
        "refused": refusal([flag, bad]),
        "in_web_ui": actions[flag].include_in_web_ui,
    }
    for flag, bad in json.loads(sys.argv[1]).items()
}))
"""


def refusal(parser: argparse.ArgumentParser, argv: list[str]) -> list[object]:
    """The exit code and argparse's words (after ``error:``) for ``argv``."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        try:
            parser.parse_args(argv)
        except SystemExit as exit:
            return [exit.code, said.getvalue().splitlines()[-1].split("error: ", 1)[-1]]
    return [0, ""]


def described(parser: argparse.ArgumentParser, action: argparse.Action) -> dict[str, Any]:
    """What a parser was given for an option and how it refuses a bad value, as the child
    reports Locust's."""
    flag = action.option_strings[-1]
    return {
        "help": action.help,
        "default": action.default,
        "metavar": action.metavar,
        "choices": list(action.choices or []),
        "type_is_the_definition's": action.type is options.LOAD_OPTIONS[flag].type,
        "refused": refusal(parser, [flag, BAD[flag]]),
    }


def test_each_load_option_has_one_definition_for_the_command_and_locust() -> None:
    """The options ``authzkit loadtest`` and the Locust process both offer come from
    one definition each: the command's parser and Locust's own (configargparse) parser hold
    the same help, default, metavar, choices and type object, refuse a bad value in the
    same words, and only the thresholds stay out of Locust's web form."""
    assert set(options.LOAD_OPTIONS) == set(SHARED) == set(BAD)
    command = argparse.ArgumentParser(prog="authzkit loadtest")
    add_loadtest_arguments(command)
    mine = {
        a.option_strings[-1]: described(command, a)
        for a in command._actions
        if a.option_strings and a.option_strings[-1] in options.LOAD_OPTIONS
    }
    done = subprocess.run(
        [sys.executable, "-c", _LOCUST_SIDE, json.dumps(BAD)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    locust = json.loads(done.stdout.splitlines()[-1])
    for flag in SHARED:
        assert locust[flag].pop("in_web_ui") is (flag not in THRESHOLDS), flag
        assert mine[flag] == locust[flag], flag
        assert mine[flag]["type_is_the_definition's"], flag
        assert mine[flag]["refused"][0] == 2, mine[flag]


def test_the_in_flight_cap_defaults_where_it_is_read() -> None:
    """``--max-in-flight`` stays None when not given (run.json records what was asked);
    the process reads the default then, and a value the web form hands back as text."""
    assert options.max_in_flight(None) == options.DEFAULT_MAX_IN_FLIGHT
    assert options.max_in_flight(5) == 5
    assert options.max_in_flight("7") == 7


def test_the_action_options_take_their_names_and_words_from_their_definition() -> None:
    """``--action`` and ``--challenge-action`` are the wire layer's ``ACTIONS``: the flag,
    the variable and the meaning every help names are those of the definition, in a bare
    parser and in ``authzkit loadtest``'s, whose help also names its scenarios."""
    bare = argparse.ArgumentParser(prog="x")
    options.add_action_options(bare)
    command = argparse.ArgumentParser(prog="authzkit loadtest")
    add_loadtest_arguments(command)
    for parser in (bare, command):
        flags = {a.option_strings[-1]: a for a in parser._actions if a.option_strings}
        for setting in ACTIONS.values():
            helped = str(flags[setting.option].help)
            assert setting.meaning in helped and setting.variable in helped, helped
            assert setting.sandbox_default in helped, helped
    assert "(authorize and token scenarios;" in str(flags["--action"].help)
    assert "(challenge scenario;" in str(flags["--challenge-action"].help)
