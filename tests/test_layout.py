"""The package's architecture, checked from its source (ast only: nothing is imported).

The rules of DESIGN.md's layout that a review would otherwise have to catch: no import
cycle; locust imported only by ``authzkit/loadtest/users.py`` and jwcrypto only by
``authzkit/jwe.py``; nothing heavy (pandas, matplotlib, starlette, uvicorn, locust, gevent)
reachable at import time from ``import authzkit`` or any module behind a public name; no
function over 100 lines; no module named after a sibling's prefix; every module declares
``__all__``. Each checker is also run on a small broken package, so it is known to fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "authzkit"
HEAVY = frozenset({"pandas", "matplotlib", "starlette", "uvicorn", "locust", "gevent"})
ONLY_IMPORTER = {"locust": "authzkit.loadtest.users", "jwcrypto": "authzkit.jwe"}
MAX_FUNCTION_LINES = 100
CORE_MODULES = ("__init__", "__main__", "answers", "authorize", "client", "clock", "config",
                "consent", "credentials", "discovery", "environment", "errors", "jwe", "locks",
                "openapi", "outcomes", "recorder", "redact", "retry", "sessions", "spec", "token",
                "transport")


@dataclass
class Module:
    """One module's imports: ``eager`` run at import time, ``lazy`` inside functions."""

    name: str
    path: Path
    tree: ast.Module
    eager: set[str] = field(default_factory=set)
    lazy: set[str] = field(default_factory=set)


def module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST, package: str) -> Iterator[str]:
    """Absolute names an import statement brings in (``from a import b`` may be ``a.b``)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        yield base
        yield from (f"{base}.{alias.name}" for alias in node.names)


def _walk(node: ast.AST, module: Module, package: str, *, eager: bool) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for orelse in child.orelse:
                _walk(orelse, module, package, eager=eager)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            (module.eager if eager else module.lazy).update(_imports(child, package))
            continue
        inside_function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        _walk(child, module, package, eager=eager and not inside_function)


def read_package(root: Path) -> dict[str, Module]:
    """Every module below ``root`` with its imports, keyed by dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(root, path)
        module = Module(name, path, ast.parse(path.read_text(encoding="utf-8")))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        _walk(module.tree, module, package, eager=True)
        modules[name] = module
    return modules


def _internal(targets: set[str], modules: dict[str, Module]) -> set[str]:
    return {t for t in targets if t in modules}


def import_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Cycles among the package's own modules, counting lazy imports too (a lazy import
    that closes a cycle only hides it until the first call)."""
    graph = {name: sorted(_internal(m.eager | m.lazy, modules) - {name})
             for name, m in modules.items()}
    cycles, state, stack = [], {}, []

    def visit(name: str) -> None:
        state[name] = "open"
        stack.append(name)
        for target in graph[name]:
            if state.get(target) == "open":
                cycles.append([*stack[stack.index(target):], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def misplaced_imports(modules: dict[str, Module]) -> list[str]:
    """Imports of locust/jwcrypto from anywhere but their one importer."""
    found = []
    for name, module in modules.items():
        for target in sorted(module.eager | module.lazy):
            top = target.split(".")[0]
            if top in ONLY_IMPORTER and name != ONLY_IMPORTER[top]:
                found.append(f"{name} imports {target}")
    return sorted(set(found))


def heavy_at_import(modules: dict[str, Module], starts: list[str]) -> list[str]:
    """Heavy libraries reached at import time from ``starts`` (eager imports only)."""
    found, seen, todo = [], set(), list(starts)
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        for target in sorted(modules[name].eager):
            if target.split(".")[0] in HEAVY:
                found.append(f"{name} imports {target}")
            todo.append(target)
    return sorted(set(found))


def long_functions(modules: dict[str, Module]) -> list[str]:
    found = []
    for name, module in modules.items():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{name}.{node.name}: {length} lines")
    return found


def prefixed_modules(root: Path) -> list[str]:
    """``x_y.py`` beside a module or package ``x``: a prefix is a missing package."""
    found = []
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                          if (p / "__init__.py").exists()}
        for stem in names:
            prefix = stem.split("_")[0]
            if not stem.startswith("__") and "_" in stem and prefix in names:
                found.append(f"{folder.name}/{stem}.py beside {prefix}")
    return found


def missing_all(modules: dict[str, Module]) -> list[str]:
    def declares(module: Module) -> bool:
        for node in module.tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AnnAssign) else [])
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return True
        return False

    return sorted(name for name, module in modules.items() if not declares(module))


def public_modules(modules: dict[str, Module]) -> list[str]:
    """``authzkit`` and every module its lazy ``_EXPORTS`` table names."""
    init = modules["authzkit"].tree
    for node in init.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        value = getattr(node, "value", None)
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and value:
            exports = ast.literal_eval(value)
            return ["authzkit", *sorted(set(exports.values()))]
    raise AssertionError("authzkit/__init__.py has no _EXPORTS table")


# -- the package --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def package() -> dict[str, Module]:
    return read_package(PACKAGE_DIR)


def test_no_import_cycle(package: dict[str, Module]) -> None:
    assert import_cycles(package) == []


def test_locust_and_jwcrypto_have_one_importer_each(package: dict[str, Module]) -> None:
    assert misplaced_imports(package) == []
    users, jwe = package["authzkit.loadtest.users"], package["authzkit.jwe"]
    assert any(t.startswith("locust") for t in users.eager)
    assert any(t.startswith("jwcrypto") for t in jwe.eager)


def test_import_authzkit_reaches_nothing_heavy(package: dict[str, Module]) -> None:
    starts = public_modules(package)
    assert "authzkit.client" in starts and "authzkit.sandbox" in starts
    assert heavy_at_import(package, starts) == []


def test_no_function_over_100_lines(package: dict[str, Module]) -> None:
    assert long_functions(package) == []


def test_no_module_named_after_a_siblings_prefix() -> None:
    assert prefixed_modules(PACKAGE_DIR) == []


def test_every_module_declares_all(package: dict[str, Module]) -> None:
    assert missing_all(package) == []


def test_one_folder_per_side_of_the_product() -> None:
    for folder in ("cli", "loadtest", "sandbox", "widgets"):
        assert (PACKAGE_DIR / folder / "__init__.py").exists(), folder
    # The core: what both sides and every user of the client share (DESIGN.md's layout).
    assert sorted(p.stem for p in PACKAGE_DIR.glob("*.py")) == sorted(CORE_MODULES)


# -- the checkers fail on a broken package -----------------------------------------------------

def _broken_package(tmp_path: Path) -> Path:
    root = tmp_path / "authzkit"
    files = {
        "__init__.py": '_EXPORTS = {"Thing": "authzkit.report"}\n__all__ = ["Thing"]\n',
        "report.py": "import pandas\n\n\ndef plots():\n    from authzkit import report_plots\n",
        "report_plots.py": "from authzkit.report import plots\n" + "\n" * 3
                           + "def draw():\n" + "    x = 1\n" * 101,
        "jwe.py": "import jwcrypto\n__all__ = []\n",
        "client.py": "from jwcrypto import jwk\n__all__ = []\n",
        "loadtest/__init__.py": "__all__ = []\n",
        "loadtest/users.py": "import locust\n__all__ = []\n",
        "loadtest/report.py": "import locust.env\n__all__ = []\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_the_checkers_see_what_is_broken(tmp_path: Path) -> None:
    root = _broken_package(tmp_path)
    modules = read_package(root)
    assert import_cycles(modules) == [["authzkit.report", "authzkit.report_plots",
                                       "authzkit.report"]]
    assert misplaced_imports(modules) == ["authzkit.client imports jwcrypto",
                                          "authzkit.client imports jwcrypto.jwk",
                                          "authzkit.loadtest.report imports locust.env"]
    assert heavy_at_import(modules, public_modules(modules)) == [
        "authzkit.report imports pandas"]
    assert long_functions(modules) == ["authzkit.report_plots.draw: 102 lines"]
    assert prefixed_modules(root) == ["authzkit/report_plots.py beside report"]
    assert missing_all(modules) == ["authzkit.report", "authzkit.report_plots"]
