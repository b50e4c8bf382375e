"""The tests' own layout rules (see ``tests/support/__init__.py`` and docs/development.md):

- one helper package imported one way: every module under ``tests/`` that is not a test
  module, a ``conftest.py`` or an ``__init__.py`` lives in ``tests/support/``, and is imported
  as ``from support.X import …`` (no relative import, no import of a test folder or module);
- every fixture name is defined once, across ``tests/`` and ``notebooks/conftest.py``;
- a folder has a conftest only for fixtures of its own: each is requested by two or more of
  the folder's test modules (else it belongs in the one module that uses it).

Each checker is a function of a tree, run on the real one (no finding) and on a broken copy
made in ``tmp_path`` (it finds exactly what was broken), so none of them passes by being blind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NOTEBOOKS_CONFTEST = TESTS.parent / "notebooks" / "conftest.py"
HELPERS = "support"
SKIPPED_DIRS = {"__pycache__", "node_modules"}


def python_files(tests: Path) -> Iterator[Path]:
    """Every ``.py`` file under ``tests`` (not in caches or a Node project's modules)."""
    for path in sorted(tests.rglob("*.py")):
        if not SKIPPED_DIRS & set(path.relative_to(tests).parts):
            yield path


def is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") or path.name in ("conftest.py", "__init__.py")


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) in ("pytest.fixture", "fixture")


def fixtures_of(path: Path) -> dict[str, ast.FunctionDef]:
    """The fixtures ``path`` defines, by the name tests request them by."""
    found: dict[str, ast.FunctionDef] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if _is_fixture(decorator):
                    name = node.name
                    if isinstance(decorator, ast.Call):
                        for keyword in decorator.keywords:
                            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                                name = str(keyword.value.value)
                    found[name] = node
    return found


def duplicate_fixtures(files: list[Path], root: Path) -> dict[str, list[str]]:
    """Fixture names defined more than once, with where (``path:line``)."""
    where: dict[str, list[str]] = {}
    for path in files:
        for name, node in fixtures_of(path).items():
            where.setdefault(name, []).append(f"{path.relative_to(root)}:{node.lineno}")
    return {name: places for name, places in where.items() if len(places) > 1}


def stray_helpers(tests: Path) -> list[str]:
    """Modules that are neither tests, conftests nor package markers, outside ``support/``."""
    return [
        str(path.relative_to(tests))
        for path in python_files(tests)
        if path.relative_to(tests).parts[0] != HELPERS and not is_test_file(path)
    ]


def local_top_level_names(tests: Path) -> set[str]:
    """The names ``tests/`` puts on ``sys.path``: its packages and top-level modules."""
    names = {p.stem for p in tests.glob("*.py")}
    names |= {p.parent.name for p in tests.glob("*/__init__.py")}
    return names - {HELPERS}


def import_problems(tests: Path) -> list[str]:
    """Relative imports, and imports of a test folder or test module instead of ``support``."""
    local = local_top_level_names(tests)
    problems = []
    for path in python_files(tests):
        where = path.relative_to(tests)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    problems.append(f"{where}:{node.lineno}: relative import")
                elif node.module and node.module.split(".")[0] in local:
                    problems.append(f"{where}:{node.lineno}: imports {node.module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in local:
                        problems.append(f"{where}:{node.lineno}: imports {alias.name}")
    return problems


def requested_names(path: Path) -> set[str]:
    """Every name ``path`` may request as a fixture: parameters of its functions, and the
    string arguments of ``usefixtures``/``getfixturevalue`` (generous: a helper's parameter
    named like a fixture counts too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef):
            names |= {arg.arg for arg in [*node.args.posonlyargs, *node.args.args]}
            names |= {arg.arg for arg in node.args.kwonlyargs}
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
            ("usefixtures", "getfixturevalue")
        ):
            names |= {str(a.value) for a in node.args if isinstance(a, ast.Constant)}
    return names


def _dependencies(node: ast.FunctionDef) -> set[str]:
    """What a fixture requests: its parameters and any string it names (``getfixturevalue``
    with a computed name)."""
    names = {arg.arg for arg in node.args.args}
    names |= {
        str(n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    return names


def conftest_problems(tests: Path) -> list[str]:
    """A folder's conftest fixture that fewer than two of the folder's test modules request,
    directly or through another fixture of that conftest."""
    problems = []
    for conftest in sorted(tests.glob("*/**/conftest.py")):
        if SKIPPED_DIRS & set(conftest.relative_to(tests).parts):
            continue
        modules = [p for p in python_files(conftest.parent) if p.name.startswith("test_")]
        requests = {module: requested_names(module) for module in modules}
        fixtures = fixtures_of(conftest)
        users: dict[str, set[Path]] = {
            name: {m for m in modules if name in requests[m]} for name in fixtures
        }
        for _ in fixtures:  # through fixtures that request fixtures, to a fixed point
            for name, node in fixtures.items():
                for other in _dependencies(node) & set(fixtures) - {name}:
                    users[other] |= users[name]
        for name, using in sorted(users.items()):
            if len(using) < 2:
                problems.append(
                    f"{conftest.relative_to(tests)}: {name} is requested by "
                    f"{len(using)} module(s) of its folder"
                )
    return problems


def fixture_files(tests: Path) -> list[Path]:
    files = list(python_files(tests))
    notebooks = tests.parent / "notebooks" / "conftest.py"
    return [*files, notebooks] if notebooks.exists() else files


# -- the real tree ----------------------------------------------------------------------------


def test_every_fixture_name_is_defined_once() -> None:
    assert duplicate_fixtures(fixture_files(TESTS), TESTS.parent) == {}


def test_every_helper_module_lives_in_support() -> None:
    assert stray_helpers(TESTS) == []


def test_helpers_are_imported_one_way() -> None:
    assert import_problems(TESTS) == []


def test_a_folder_conftest_holds_only_its_folders_shared_fixtures() -> None:
    assert conftest_problems(TESTS) == []


# -- a broken tree: each checker finds what was broken ------------------------------------------


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef {name}() -> int:\n    return 1\n"
USES = "def test_it({names}) -> None:\n    pass\n"


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A tests tree breaking each rule once, beside files that keep them."""
    tests = tmp_path / "tests"
    return _write(
        tests,
        {
            "conftest.py": FIXTURE.format(name="shared"),
            "leaks.py": "def shows() -> bool:\n    return True\n",  # a top-level helper
            "support/__init__.py": "",
            "support/tokens.py": "TOKEN = 't'\n",
            "core/__init__.py": "",
            "core/fakes.py": "FAKE = 1\n",  # a folder's helper module
            "core/conftest.py": FIXTURE.format(name="fake")
            + "\n\n@pytest.fixture\ndef alone() -> int:\n    return 2\n"
            + "\n\n@pytest.fixture(name='renamed')\ndef _renamed(fake: int) -> int:\n"
            + "    return fake\n",
            "core/test_one.py": "from .fakes import FAKE\nfrom support.tokens import TOKEN\n\n"
            + USES.format(names="renamed, alone"),
            "core/test_two.py": "from leaks import shows\n\n" + USES.format(names="renamed"),
            "cli/__init__.py": "",
            "cli/test_cli.py": "import core.fakes\n\n" + FIXTURE.format(name="shared"),
            "cli/test_more.py": "from core.test_one import test_it\n" + FIXTURE.format(name="fake"),
        },
    )


def test_a_fixture_defined_twice_is_found_wherever_it_is(broken: Path) -> None:
    found = duplicate_fixtures(fixture_files(broken), broken.parent)
    assert found == {
        "shared": ["tests/cli/test_cli.py:7", "tests/conftest.py:5"],
        "fake": ["tests/cli/test_more.py:6", "tests/core/conftest.py:5"],
    }


def test_a_helper_outside_support_is_found(broken: Path) -> None:
    assert stray_helpers(broken) == ["core/fakes.py", "leaks.py"]


def test_a_relative_or_a_test_folder_import_is_found(broken: Path) -> None:
    assert import_problems(broken) == [
        "cli/test_cli.py:1: imports core.fakes",
        "cli/test_more.py:1: imports core.test_one",
        "core/test_one.py:1: relative import",
        "core/test_two.py:1: imports leaks",
    ]


def test_a_conftest_fixture_one_module_uses_is_found(broken: Path) -> None:
    # ``fake`` counts both modules through ``renamed``; ``alone`` has one user
    assert conftest_problems(broken) == [
        "core/conftest.py: alone is requested by 1 module(s) of its folder"
    ]


def test_the_notebooks_conftest_is_part_of_the_fixture_count() -> None:
    assert NOTEBOOKS_CONFTEST in fixture_files(TESTS)
