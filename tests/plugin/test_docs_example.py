"""docs/testing.md's complete example runs as written: its ``# file:`` code blocks become a
project, and pytest passes every test in it with the plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
BLOCK = re.compile(
    r"^```python\n# file: (?P<name>[\w./]+)\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL
)


def example_files() -> dict[str, str]:
    return {m["name"]: m["code"] for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))}


def test_the_page_has_the_example() -> None:
    files = example_files()
    assert sorted(files) == ["service.py", "test_service.py"]
    assert "Testing your service against the sandbox" in PAGE.read_text(encoding="utf-8")


def test_the_example_runs_and_passes(pytester: pytest.Pytester) -> None:
    files = example_files()
    for name, code in files.items():
        pytester.path.joinpath(name).write_text(code, encoding="utf-8")
    pytester.syspathinsert()
    expected = len(re.findall(r"^def test_", files["test_service.py"], re.MULTILINE))
    result = pytester.runpytest("-p", "no:cacheprovider", "test_service.py")
    result.assert_outcomes(passed=expected)
    assert expected >= 7
