"""The README's promises: its Python examples run, and Quick start is exactly two commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
TEXT = README.read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[f"block{i}" for i in
                                                     range(len(PYTHON_BLOCKS))])
def test_python_example_runs(block: str, monkeypatch: pytest.MonkeyPatch,
                             tmp_path: Path) -> None:
    for name in ("AUTHZKIT_BASE_URL", "AUTHZKIT_AUTH_URL", "AUTHZKIT_CLIENT_ID",
                 "AUTHZKIT_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(README), "exec"), {})


def test_quick_start_is_two_commands_in_one_sh_block() -> None:
    section = TEXT.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(commands) == 2
    assert "authzkit demo" in commands[0]
    assert "pytest" in commands[1]
