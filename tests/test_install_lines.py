"""The README and the docs name exactly the install lines CI runs (issue 45).

``.ci/installs`` (run by ``.ci/run`` after the suite) runs every ``pip install`` line of
authzkit the pages name, as written, in a fresh venv, then what the page promises for it;
``bash .ci/installs --list`` prints those lines. A page naming a line that is not one of them
(``pip install "authzkit[sandbox]"``: authzkit is not on PyPI) fails here, and so does a line
``.ci/installs`` runs that no page names. Lines of other projects (``pip install
podman-compose``) are not authzkit's; ``deploy/Dockerfile``'s are ``.ci/containers``' (it builds
the image), so a page may quote those too. Reads files and ``--list`` only: no venv.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent

# A fenced code block (indented too, as in a list), and an inline code span (which may wrap).
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
SEPARATOR = re.compile(r"&&|\|\||;|\|")
COMMENT = re.compile(r"(?:^|\s)#.*$")
PIP_INSTALL = re.compile(r"^(?:\S*python3?(?:\.\d+)? -m )?pip3? install(?:\s|$)")
# pip options that take the next word as their value (-e's value is a target).
VALUED = {
    "-c",
    "--constraint",
    "-r",
    "--requirement",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
}


def commands(code: str) -> list[str]:
    """The shell commands of a piece of code: continued lines joined, each line split at
    ``&&``, ``||``, ``;`` and ``|``; comments, a ``$`` prompt, Dockerfile's ``RUN`` and runs
    of blanks dropped."""
    found: list[str] = []
    for raw in code.replace("\\\n", " ").splitlines():
        line = COMMENT.sub("", raw).strip().removeprefix("$ ").removeprefix("RUN ")
        for command in SEPARATOR.split(line):
            if words := command.split():
                found.append(" ".join(words))
    return found


def pip_installs(markdown: str) -> list[tuple[int, str]]:
    """Every ``pip install`` command of a Markdown text, in code blocks and inline code, with
    the line it is on (a block's first line)."""
    found: list[tuple[int, str]] = []
    for block in FENCE.finditer(markdown):
        line = markdown.count("\n", 0, block.start()) + 1
        found += [(line, c) for c in commands(block.group(2)) if PIP_INSTALL.match(c)]
    # The prose, blocks blanked out (their line breaks kept, so line numbers hold).
    prose = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), markdown)
    for span in SPAN.finditer(prose):
        line = prose.count("\n", 0, span.start()) + 1
        code = span.group(2).replace("\n", " ")
        found += [(line, c) for c in commands(code) if PIP_INSTALL.match(c)]
    return sorted(found, key=lambda place: place[0])


def targets(command: str) -> list[str]:
    """What a ``pip install`` command installs: its words that are not options."""
    words = shlex.split(command)
    words = words[words.index("install") + 1 :]
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in VALUED:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
    return found


def installs_authzkit(command: str) -> bool:
    """Whether the command installs authzkit: a path (``.``, ``".[sandbox]"``, a file in
    ``dist/``) or the name ``authzkit``; ``pip install build`` installs another project."""
    for target in targets(command):
        try:
            requirement = Requirement(target)
        except InvalidRequirement:
            return True
        if canonicalize_name(requirement.name) == "authzkit":
            return True
    return False


def pages() -> list[Path]:
    """The README and every docs page (generated pages, ignored by git, left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "--", "README.md", "docs/*.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return [ROOT / name for name in listed if name and (ROOT / name).is_file()]


def documented() -> dict[str, list[str]]:
    """Each authzkit install line the pages name, with the places naming it."""
    found: dict[str, list[str]] = {}
    for page in pages():
        for line, command in pip_installs(page.read_text(encoding="utf-8")):
            if installs_authzkit(command):
                found.setdefault(command, []).append(f"{page.relative_to(ROOT)}:{line}")
    return found


def run_by_installs() -> list[str]:
    """The ``pip install`` commands of the lines ``.ci/installs`` runs (``--list``)."""
    listed = subprocess.run(
        ["bash", ".ci/installs", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [c for line in listed.splitlines() for c in commands(line) if PIP_INSTALL.match(c)]


def built_by_containers() -> list[str]:
    """The ``pip install`` commands of ``deploy/Dockerfile`` (``.ci/containers`` builds it)."""
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    return [c for c in commands(dockerfile) if PIP_INSTALL.match(c)]


def test_every_documented_install_line_is_one_ci_runs() -> None:
    checked = set(run_by_installs()) | set(built_by_containers())
    unchecked = {line: places for line, places in documented().items() if line not in checked}
    assert not unchecked, (
        "install lines the docs name that CI does not run (a line must work from a clone: "
        "authzkit is not on PyPI; a new one goes into .ci/installs, with a check of what its "
        f"page promises): {unchecked}"
    )


def test_every_line_ci_runs_is_documented() -> None:
    named = documented()
    run = run_by_installs()
    assert len(run) >= 9, run
    missing = [line for line in run if line not in named]
    assert not missing, (
        f".ci/installs runs lines no page names as written (the docs changed?): {missing}"
    )


def test_the_quick_start_rows_are_the_readmes_commands() -> None:
    listed = subprocess.run(
        ["bash", ".ci/installs", "--list"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", readme, re.S)
    assert block is not None
    assert listed[:2] == block.group(1).splitlines()


PAGE = """\
# A page

```sh
pip install -e ".[sandbox]" && authzkit demo
pip install -c constraints.txt -e ".[dev]"   # the pinned test environment
python -m pip install podman-compose
```

- a list item:

  ```sh
  pip install build \\
      --quiet
  ```

Inline, `pip install "authzkit[sandbox]"`, and one that wraps: `pip install
-e ".[worker]"`; `pip install` alone names no target; ``pip install .`` too.
"""


def test_the_collector_finds_every_form_a_page_may_use() -> None:
    found = pip_installs(PAGE)
    assert found == [
        (3, 'pip install -e ".[sandbox]"'),
        (3, 'pip install -c constraints.txt -e ".[dev]"'),
        (3, "python -m pip install podman-compose"),
        (11, "pip install build --quiet"),
        (16, 'pip install "authzkit[sandbox]"'),
        (16, 'pip install -e ".[worker]"'),
        (17, "pip install"),
        (17, "pip install ."),
    ]
    assert [installs_authzkit(command) for _, command in found] == [
        True,
        True,
        False,
        False,
        True,
        True,
        False,
        True,
    ]


def test_an_unchecked_line_on_a_page_fails() -> None:
    """The line docs/testing.md had: the collector finds it, and CI runs no such line."""
    [(_, line)] = pip_installs('```sh\npip install "authzkit[sandbox]"\n```\n')
    assert installs_authzkit(line)
    assert line not in set(run_by_installs()) | set(built_by_containers())
