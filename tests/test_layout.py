"""The package's architecture, checked from its source (ast only: nothing is imported).

The rules of the project's layout (docs/development.md) that a review would otherwise have
to catch: the layers (the folders wire/, client/, shared/, then the sides) import
only downwards; no import cycle, type-only imports included; locust imported only by
``authzkit/loadtest/record/``'s users, process and listeners, and jwcrypto only inside
``authzkit/wire/jwe/``; nothing heavy (pandas, matplotlib, starlette, uvicorn, locust, gevent)
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
# A library's only importers (a module, or a package and every module inside it): locust
# patches the process with gevent when imported; jwcrypto's exceptions stay in authzkit.wire.jwe.
ONLY_IMPORTERS = {
    "locust": (
        "authzkit.loadtest.record.users",
        "authzkit.loadtest.record.locust_setup",
        "authzkit.loadtest.record.listeners",
        "authzkit.loadtest.record.start",
    ),
    "jwcrypto": ("authzkit.wire.jwe",),
}
MAX_FUNCTION_LINES = 100
# A module docstring says what the module is for in a few lines; the long story is in docs/
# (docs/internals.md). The modules still over are listed until they are shortened: the list
# only shrinks (a listed module now under the limit fails too, until it is struck off).
MAX_MODULE_DOCSTRING = 600
OVER_LIMIT_FOR_NOW = frozenset(
    {
        "authzkit",  # its docstring holds the layer map, longer than any prose may be
    }
)
# The layers are folders of the package (their modules' layer is read from the path), then
# the sides; ``authzkit``, ``__main__`` and the data files sit on top.
LAYERS = ("wire", "client", "shared")
SIDES = ("sandbox", "check", "loadtest", "widgets", "cli", "pytest_plugin", "testing")
# Deprecated former homes (``authzkit.jwe`` ...), each a module that warns and offers its new
# home's names (authzkit/wire/deprecation.py); they sit on top, like ``authzkit`` itself.
FORMER = ("clock", "errors", "jwe", "openapi", "policy", "recorder")
TOP_LEVEL = ("__init__", "__main__", *LAYERS, *FORMER)


@dataclass
class Module:
    """One module's imports: ``eager`` run at import time, ``lazy`` inside functions."""

    name: str
    path: Path
    tree: ast.Module
    eager: set[str] = field(default_factory=set)
    lazy: set[str] = field(default_factory=set)
    typing: set[str] = field(default_factory=set)  # under ``if TYPE_CHECKING:``

    @property
    def imports(self) -> set[str]:
        return self.eager | self.lazy | self.typing


def module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, package: str, known: set[str]) -> Iterator[str]:
    """Absolute names an import statement brings in (``from a import b`` may be ``a.b``;
    ``from authzkit.wire import jwe`` imports the module ``authzkit.wire.jwe``, not a name
    of the package's face)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        names = [f"{base}.{alias.name}" for alias in node.names]
        if not all(name in known for name in names):
            yield base
        yield from names


def _walk(
    node: ast.AST,
    module: Module,
    package: str,
    known: set[str],
    *,
    eager: bool,
    typing: bool = False,
) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for body in child.body:
                _walk(ast.Module([body], []), module, package, known, eager=False, typing=True)
            for orelse in child.orelse:
                _walk(ast.Module([orelse], []), module, package, known, eager=eager)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            found = module.typing if typing else module.eager if eager else module.lazy
            found.update(_imports(child, package, known))
            continue
        inside_function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        _walk(child, module, package, known, eager=eager and not inside_function, typing=typing)


def read_package(root: Path) -> dict[str, Module]:
    """Every module below ``root`` with its imports, keyed by dotted name."""
    paths = sorted(root.rglob("*.py"))
    known = {module_name(root, path) for path in paths}
    modules = {}
    for path in paths:
        name = module_name(root, path)
        module = Module(name, path, ast.parse(path.read_text(encoding="utf-8")))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        _walk(module.tree, module, package, known, eager=True)
        modules[name] = module
    return modules


def _internal(targets: set[str], modules: dict[str, Module]) -> set[str]:
    return {t for t in targets if t in modules}


def import_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Cycles among the package's own modules, counting lazy and type-only imports too (a
    lazy import that closes a cycle only hides it until the first call, a type-only one
    until someone needs the name at run time)."""
    graph = {name: sorted(_internal(m.imports, modules) - {name}) for name, m in modules.items()}
    cycles, state, stack = [], {}, []

    def visit(name: str) -> None:
        state[name] = "open"
        stack.append(name)
        for target in graph[name]:
            if state.get(target) == "open":
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def misplaced_imports(modules: dict[str, Module]) -> list[str]:
    """Imports of locust/jwcrypto from anywhere but their importers (a package named there
    covers the modules inside it: ``authzkit.wire.jwe.keys``, not ``authzkit.jwekeys``)."""
    found = []
    for name, module in modules.items():
        for target in sorted(module.eager | module.lazy):
            top = target.split(".")[0]
            if top in ONLY_IMPORTERS and not any(
                name == importer or name.startswith(f"{importer}.")
                for importer in ONLY_IMPORTERS[top]
            ):
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


def long_module_docstrings(modules: dict[str, Module]) -> dict[str, int]:
    """The modules whose docstring runs over :data:`MAX_MODULE_DOCSTRING` characters."""
    found = {}
    for name, module in modules.items():
        doc = ast.get_docstring(module.tree, clean=False) or ""
        if len(doc) > MAX_MODULE_DOCSTRING:
            found[name] = len(doc)
    return found


def prefixed_modules(root: Path) -> list[str]:
    """``x_y.py`` beside a module or package ``x``: a prefix is a missing package."""
    found = []
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        names = {p.stem for p in folder.glob("*.py")} | {
            p.name for p in folder.iterdir() if (p / "__init__.py").exists()
        }
        for stem in names:
            prefix = stem.split("_")[0]
            if not stem.startswith("__") and "_" in stem and prefix in names:
                found.append(f"{folder.name}/{stem}.py beside {prefix}")
    return found


def missing_all(modules: dict[str, Module]) -> list[str]:
    def declares(module: Module) -> bool:
        for node in module.tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, ast.AnnAssign) else [])
            )
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return True
        return False

    return sorted(name for name, module in modules.items() if not declares(module))


def layer_of(name: str) -> str | None:
    """The layer of a module, from its path: ``wire``, ``client`` or ``shared`` (the folder
    it sits in, a package inside it included), a side's name, or None (``authzkit`` itself
    and ``__main__`` sit on top of everything, and so do the deprecated former homes)."""
    parts = name.split(".")
    if len(parts) == 1 or parts[1] == "__main__" or parts[1] in FORMER:
        return None
    if parts[1] in LAYERS:
        return parts[1]
    return parts[1] if parts[1] in SIDES else "unplaced"


BELOW = {
    "wire": {"wire"},
    "client": {"wire", "client"},
    "shared": {"wire", "client", "shared", "sandbox"},
    "sandbox": {"wire", "sandbox"},
}
# The one exception to the table: the options every command line shares. A package of the
# glue layer whose modules import only the wire layer (and each other), so a side reaching
# it still reaches only the wire. The sandbox imports its public home, never a module inside.
SHARED_OPTIONS = "authzkit.shared.options"


def _in_shared_options(name: str) -> bool:
    return name == SHARED_OPTIONS or name.startswith(f"{SHARED_OPTIONS}.")


def layer_violations(modules: dict[str, Module]) -> list[str]:
    """Imports (eager, lazy or type-only) that go up the map of ``authzkit/__init__.py``:
    the wire layer imports nothing above it, the client no glue and no side, the glue no
    side but the sandbox, the sandbox only the wire layer, and no side imports ``cli/``."""
    found = []
    root = next(iter(modules)).split(".")[0] if modules else "authzkit"
    for name, module in sorted(modules.items()):
        layer = layer_of(name)
        if layer == "unplaced":
            found.append(f"{name} is in no layer of the map")
            continue
        for target in sorted(_internal(module.imports, modules)):
            to = layer_of(target)
            if layer is None or target == name or to == layer:
                continue
            allowed = BELOW.get(layer)
            if name.startswith(f"{root}.sandbox") and target == SHARED_OPTIONS:
                allowed = None
            too_high = to is None or (allowed is not None and to not in allowed)
            if too_high or (layer not in ("cli", "shared") and to == "cli"):
                found.append(f"{name} ({layer}) imports {target} ({to or 'the facade'})")
    for name, module in sorted(modules.items()):
        if not _in_shared_options(name):
            continue
        for target in sorted(_internal(module.imports, modules)):
            if layer_of(target) != "wire" and not _in_shared_options(target):
                found.append(f"{name} (shared options) imports {target}")
    return found


def public_modules(modules: dict[str, Module]) -> list[str]:
    """``authzkit`` and every module its lazy ``_EXPORTS`` table names."""
    init = modules["authzkit"].tree
    for node in init.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
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


def test_layers_import_only_downwards(package: dict[str, Module]) -> None:
    assert layer_violations(package) == []


def _listed(doc: str, layer: str) -> set[str]:
    """The module names the map lists for ``layer``: its line and the continuation lines
    that hold names only (the description after them is prose)."""
    lines = doc.split(f"    {layer}/", 1)[1].splitlines()
    listed = set(lines[0].split())
    for line in lines[1:]:
        words = line.split()
        if not words or not all(word.isidentifier() for word in words):
            break
        listed |= set(words)
    return listed


def test_the_map_in_the_docstring_names_every_layer_module() -> None:
    """The map in ``authzkit/__init__.py`` lists exactly the modules of each layer's folder."""
    import authzkit

    for layer in LAYERS:
        folder = PACKAGE_DIR / layer
        members = {p.stem for p in folder.glob("*.py")} - {"__init__"}
        members |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert _listed(authzkit.__doc__ or "", layer) == members, layer


def test_locust_and_jwcrypto_have_only_their_importers(package: dict[str, Module]) -> None:
    assert misplaced_imports(package) == []
    users = package["authzkit.loadtest.record.users"]
    jwe = [m for name, m in package.items() if name.startswith("authzkit.wire.jwe.")]
    assert any(t.startswith("locust") for t in users.eager)
    assert any(t.startswith("jwcrypto") for module in jwe for t in module.eager)


def test_import_authzkit_reaches_nothing_heavy(package: dict[str, Module]) -> None:
    starts = public_modules(package)
    assert "authzkit.client.facade" in starts and "authzkit.sandbox" in starts
    assert heavy_at_import(package, starts) == []


def test_no_function_over_100_lines(package: dict[str, Module]) -> None:
    assert long_functions(package) == []


def test_no_module_named_after_a_siblings_prefix() -> None:
    assert prefixed_modules(PACKAGE_DIR) == []


def test_module_docstrings_say_in_a_few_lines_what_the_module_is_for(
    package: dict[str, Module],
) -> None:
    over = long_module_docstrings(package)
    new_essays = {name: n for name, n in over.items() if name not in OVER_LIMIT_FOR_NOW}
    assert new_essays == {}, "move the explanation to docs/ (docs/internals.md, say)"
    shortened = sorted(OVER_LIMIT_FOR_NOW - over.keys())
    assert shortened == [], "now at most 600 characters (or gone): strike off OVER_LIMIT_FOR_NOW"


def test_every_module_declares_all(package: dict[str, Module]) -> None:
    assert missing_all(package) == []


def test_one_folder_per_side_of_the_product() -> None:
    for folder in ("cli", "loadtest", "sandbox", "widgets"):
        assert (PACKAGE_DIR / folder / "__init__.py").exists(), folder
    # The core: what both sides and every user of the client share (docs/development.md).
    # (a side may be one module, like the pytest plugin; a member of the core a package)
    packages = {p.name for p in PACKAGE_DIR.iterdir() if (p / "__init__.py").exists()}
    top_level = ({p.stem for p in PACKAGE_DIR.glob("*.py")} | packages) - set(SIDES)
    assert sorted(top_level) == sorted(TOP_LEVEL)


# -- the checkers fail on a broken package -----------------------------------------------------


def _broken_package(tmp_path: Path) -> Path:
    root = tmp_path / "authzkit"
    files = {
        "__init__.py": '_EXPORTS = {"Thing": "authzkit.report"}\n__all__ = ["Thing"]\n',
        "report.py": "import pandas\n\n\ndef plots():\n    from authzkit import report_plots\n",
        "report_plots.py": "from authzkit.report import plots\n"
        + "\n" * 3
        + "def draw():\n"
        + "    x = 1\n" * 101,
        "wire/__init__.py": "__all__ = []\n",
        "wire/jwe/__init__.py": "import jwcrypto\n__all__ = []\n",
        "wire/jwe/keys.py": "from jwcrypto import jwk\n__all__ = []\n",
        "wire/jwekeys.py": "import jwcrypto.jwk\n__all__ = []\n",
        "client/__init__.py": "__all__ = []\n",
        "client/facade.py": "from jwcrypto import jwk\n__all__ = []\n",
        "loadtest/__init__.py": "__all__ = []\n",
        "loadtest/record/__init__.py": "__all__ = []\n",
        "loadtest/record/users.py": "import locust\n__all__ = []\n",
        "loadtest/report.py": "import locust.env\n__all__ = []\n",
        "wire/essay.py": '"""' + "A reason. " * 61 + '"""\n__all__ = []\n',
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_the_checkers_see_what_is_broken(tmp_path: Path) -> None:
    root = _broken_package(tmp_path)
    modules = read_package(root)
    assert import_cycles(modules) == [
        ["authzkit.report", "authzkit.report_plots", "authzkit.report"]
    ]
    assert misplaced_imports(modules) == [
        "authzkit.client.facade imports jwcrypto",
        "authzkit.client.facade imports jwcrypto.jwk",
        "authzkit.loadtest.report imports locust.env",
        "authzkit.wire.jwekeys imports jwcrypto.jwk",
    ]
    assert heavy_at_import(modules, public_modules(modules)) == ["authzkit.report imports pandas"]
    assert long_functions(modules) == ["authzkit.report_plots.draw: 102 lines"]
    assert prefixed_modules(root) == ["authzkit/report_plots.py beside report"]
    assert missing_all(modules) == ["authzkit.report", "authzkit.report_plots"]
    assert long_module_docstrings(modules) == {"authzkit.wire.essay": 610}


def _badly_layered_package(tmp_path: Path) -> Path:
    root = tmp_path / "authzkit"
    files = {
        "__init__.py": "",
        "wire/__init__.py": "",
        "wire/spec.py": "from authzkit.client.facade import Client\n",
        "wire/oauth/__init__.py": "",
        "wire/oauth/grants.py": "from authzkit.client.token import Token\n",
        "client/__init__.py": "",
        "client/facade.py": "def run():\n    from authzkit.shared import flows\n",
        "client/exchanges.py": "",
        "client/token.py": "from typing import TYPE_CHECKING\n\n"
        "from authzkit.client.unauthenticated import S\n",
        "client/unauthenticated.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from authzkit.client.token import T\n",
        "shared/__init__.py": "",
        "shared/flows.py": "from authzkit.sandbox import server\n"
        "from authzkit.widgets import form\n",
        "shared/options/__init__.py": "from authzkit.client.facade import Client\n",
        "shared/options/values.py": "from authzkit.shared.flows import Flow\n",
        "shared/options/paths.py": "from authzkit.shared.options.values import check\n",
        "cache.py": "",
        "sandbox/__init__.py": "",
        "sandbox/server.py": "from authzkit import __version__, errors\n"
        "from authzkit.client.exchanges import Recorder\n",
        "sandbox/command.py": "from authzkit.shared import options\n",
        "sandbox/ports.py": "from authzkit.shared.options.values import check\n",
        "widgets/__init__.py": "",
        "widgets/form.py": "from authzkit.cli import main\n",
        "cli/__init__.py": "",
        "cli/main.py": "from authzkit import sandbox, widgets\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_the_layer_checkers_see_what_is_broken(tmp_path: Path) -> None:
    modules = read_package(_badly_layered_package(tmp_path))
    assert import_cycles(modules) == [
        ["authzkit.client.token", "authzkit.client.unauthenticated", "authzkit.client.token"]
    ]
    assert layer_violations(modules) == [
        "authzkit.cache is in no layer of the map",
        "authzkit.client.facade (client) imports authzkit.shared.flows (shared)",
        "authzkit.sandbox.ports (sandbox) imports authzkit.shared.options.values (shared)",
        "authzkit.sandbox.server (sandbox) imports authzkit (the facade)",
        "authzkit.sandbox.server (sandbox) imports authzkit.client.exchanges (client)",
        "authzkit.shared.flows (shared) imports authzkit.widgets.form (widgets)",
        "authzkit.widgets.form (widgets) imports authzkit.cli.main (cli)",
        "authzkit.wire.oauth.grants (wire) imports authzkit.client.token (client)",
        "authzkit.wire.spec (wire) imports authzkit.client.facade (client)",
        "authzkit.shared.options (shared options) imports authzkit.client.facade",
        "authzkit.shared.options.values (shared options) imports authzkit.shared.flows",
    ]
    assert "authzkit.sandbox.command" not in str(layer_violations(modules))  # options: allowed
