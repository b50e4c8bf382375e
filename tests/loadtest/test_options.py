"""``authzkit.shared.options``: each shared option's type and range, as argparse reports them
(one line, exit 2), and the output-path check that runs before anything is written."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from authzkit.shared import options
from authzkit.wire.errors import ConfigError


def parser() -> argparse.ArgumentParser:
    built = argparse.ArgumentParser(prog="x")
    built.add_argument("--count", type=options.count(1, also=(-1,)))
    built.add_argument("--ratio", type=options.ratio)
    built.add_argument("--run-time", type=options.run_time)
    built.add_argument("--out", type=options.output_directory)
    built.add_argument("--file", type=options.output_file_or_stdout)
    options.add_token_ttl(built, None, "ttl")
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
