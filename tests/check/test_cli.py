"""`authzkit check` on the command line: exit codes, JSON, JUnit and Markdown files."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from authzkit.check import command, runner
from authzkit.check.results import Finding
from authzkit.cli.main import main


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AUTHZKIT_* of the person running the tests, no .env: the embedded sandbox."""
    for name in list(os.environ):
        if name.startswith("AUTHZKIT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_files_and_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--json", "r.json", "--junit", "r.xml", "--markdown", "r.md"])
    out = capsys.readouterr().out
    assert code == 0
    assert "[challenge]" in out and "challenge.single_use" in out
    assert out.rstrip().endswith("34 rows: 33 pass, 0 diff, 0 fail, 1 skip")

    data = json.loads((tmp_path / "r.json").read_text())
    assert set(data) == {"target", "rows", "summary"}
    assert data["summary"] == {"pass": 33, "diff": 0, "fail": 0, "skip": 1, "not-offered": 0}
    assert data["target"]["sandbox"] is True and data["target"]["real"] is False
    row = data["rows"][0]
    assert {"id", "title", "spec", "verdict", "detail", "evidence"} <= set(row)
    assert {"method", "url", "status", "request_body", "body_excerpt", "curl"} == set(
        row["evidence"][0]
    )

    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite is not None, "no <testsuite> in the JUnit file"
    cases = suite.findall("testcase")
    assert len(cases) == 34 and suite.get("tests") == "34"
    assert suite.get("failures") == "0" and suite.get("skipped") == "1"
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert [c.get("name") for c in skipped] == ["transport.correlation_id"]
    assert skipped[0].get("classname") == "authzkit.check.transport"

    md = (tmp_path / "r.md").read_text()
    assert "## challenge" in md and "| row | verdict | SPEC | detail |" in md
    assert "| `challenge.single_use` | pass (security) |" in md


def test_published_diffs_are_passes_with_system_out_in_junit(tmp_path: Path) -> None:
    assert (
        main(["check", "--dialect", "published", "--only", "challenge.object", "--junit", "r.xml"])
        == 0
    )
    case = ET.parse(tmp_path / "r.xml").getroot().find("testsuite/testcase")
    assert case is not None, "no <testcase> in the JUnit file"
    assert case.find("failure") is None and case.find("skipped") is None
    system_out = case.find("system-out")
    assert system_out is not None and system_out.text is not None, "no <system-out> text"
    assert "challenge type at top level" in system_out.text


def test_a_failing_row_exits_1_with_its_failure_in_junit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = [
        dataclasses.replace(r, check=lambda probe: Finding("fail", "expected x; got y"))
        if r.id == "authorize.shape_a"
        else r
        for r in runner.ROWS
    ]
    monkeypatch.setattr(runner, "ROWS", tuple(broken))
    assert main(["check", "--only", "authorize.*", "--junit", "r.xml"]) == 1
    assert "FAIL  authorize.shape_a" in capsys.readouterr().out
    failures = ET.parse(tmp_path / "r.xml").getroot().findall(".//failure")
    assert [f.get("message") for f in failures] == ["expected x; got y"]


@pytest.mark.parametrize(
    "argv, env, words",
    [
        (["check", "--only", "nothing.like.this"], {}, "matches no row"),
        (["check"], {"AUTHZKIT_BASE_URL": "not-a-url"}, "AUTHZKIT_BASE_URL"),
    ],
)
def test_configuration_errors_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    words: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_confirmation_needs_yes_without_a_terminal() -> None:
    out = io.StringIO()
    assert command.make_confirm(yes=False, stdin=io.StringIO(), out=out)(51) is False
    assert out.getvalue() == "", "the refusal's one line says it (run_checks' ConfigError)"
    assert command.make_confirm(yes=True, stdin=io.StringIO(), out=io.StringIO())(500)
    assert command.make_confirm(yes=False, stdin=io.StringIO(), out=io.StringIO())(50)
