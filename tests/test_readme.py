"""The README's promises: Quick start is exactly two commands, its test command installs the
pinned environment of ``constraints.txt``, it stays short and points into the docs; and the
Python examples of the docs pages (moved there from the README) run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
# docs/testing.md's examples are files of a partner project: tests/plugin runs them as such.
PAGES = [
    README,
    *sorted(page for page in (ROOT / "docs").rglob("*.md") if page.name != "testing.md"),
]
PYTHON_BLOCKS = [
    (page, block)
    for page in PAGES
    if "_build" not in page.parts
    for block in re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)
]


@pytest.mark.parametrize(
    ("page", "block"),
    PYTHON_BLOCKS,
    ids=[f"{page.relative_to(ROOT)}:block{i}" for i, (page, _) in enumerate(PYTHON_BLOCKS)],
)
def test_python_example_runs(
    page: Path, block: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in (
        "AUTHZKIT_BASE_URL",
        "AUTHZKIT_AUTH_URL",
        "AUTHZKIT_CLIENT_ID",
        "AUTHZKIT_CLIENT_SECRET",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(page), "exec"), {})


def test_readme_is_short_and_links_into_the_docs() -> None:
    assert len(TEXT.encode()) <= 10_240, "the README reads in two minutes: move detail to docs/"
    for link in re.findall(r"\]\((docs/[^)#]+)", TEXT):
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"


def test_no_file_refers_to_design_inputs_outside_the_repository() -> None:
    """The repository documents itself: no file cites a document that is not in it."""
    import subprocess

    names = ["SPEC" + ".md", "PROVIDER" + ".md", "DESIGN" + ".md", "../" + "shared"]
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    found = [
        f"{path}: {name}"
        for path in tracked
        if path and (ROOT / path).is_file()
        for name in names
        if name in (ROOT / path).read_text("utf-8", errors="replace")
    ]
    assert not found, found


def test_quick_start_is_two_commands_in_one_sh_block() -> None:
    section = TEXT.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(commands) == 2
    assert "authzkit demo" in commands[0]
    assert "pytest" in commands[1]
    assert "-c constraints.txt" in commands[1]  # the pinned test environment


def _requirements(extra: str, extras: dict[str, list[str]]) -> list[Requirement]:
    """The requirements an extra installs, through its ``authzkit[...]`` self-references."""
    found: list[Requirement] = []
    for line in extras[extra]:
        requirement = Requirement(line)
        if requirement.name == "authzkit":
            for inner in sorted(requirement.extras):
                found += _requirements(inner, extras)
        else:
            found.append(requirement)
    return found


def test_constraints_pin_every_dev_requirement_within_its_range() -> None:
    """The lock covers what the test command installs, and agrees with pyproject's ranges."""
    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (README.parent / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[canonicalize_name(name)] = version.strip()
    wanted = project["dependencies"] + [
        str(r) for r in _requirements("dev", project["optional-dependencies"])
    ]
    for requirement in map(Requirement, wanted):
        pinned = pins.get(canonicalize_name(requirement.name))
        assert pinned is not None, f"constraints.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pinned, prereleases=True), (
            f"constraints.txt pins {requirement.name}=={pinned}, outside {requirement}"
        )
