"""The package's layers: each folder imports only the folders below it, no import cycle, a cheap `import policyengine`.

docs/architecture.md draws the layers; ALLOWED below is the same drawing, checked. Imports inside
functions count (a lazy import is still an arrow); imports under `if TYPE_CHECKING:` do not (they
never run).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import policyengine

PACKAGE = Path(policyengine.__file__).parent
ROOT = PACKAGE.parent

# Each layer (a folder, or a top-level module) and the layers it may import, besides itself.
BELOW_VALUES = {"errors"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "values": BELOW_VALUES,
    "tools": BELOW_VALUES | {"values"},
    "arguments": BELOW_VALUES | {"values"},
    "language": BELOW_VALUES | {"values", "arguments"},
    "sessions": BELOW_VALUES | {"values"},
    "packs": BELOW_VALUES | {"values", "tools", "arguments", "language"},
    "runtime": BELOW_VALUES | {"values", "tools", "sessions"},
    "enforce": BELOW_VALUES | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime"},
    # The audit record, its redaction, the one writer and OpenTelemetry export (every front end writes through it).
    "audit": BELOW_VALUES | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce"},
    "dryrun": BELOW_VALUES | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce"},
    "testing": BELOW_VALUES | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce"},
    # Properties searched (later proved) over the calls a catalog admits; the search reuses testing's spellings.
    "verify": BELOW_VALUES
    | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce", "testing"},
    "adapters": BELOW_VALUES
    | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce", "audit"},
    "service": BELOW_VALUES
    | {"values", "tools", "arguments", "language", "sessions", "packs", "runtime", "enforce", "audit"},
    "cli": BELOW_VALUES
    | {
        "values",
        "tools",
        "arguments",
        "language",
        "sessions",
        "packs",
        "runtime",
        "enforce",
        "adapters",
        "audit",
        "service",
        "dryrun",
        "testing",
        "verify",
    },
    # The facade re-exports from every layer; `python -m policyengine` runs the CLI.
    "__init__": {"errors", "values", "tools", "packs", "runtime", "enforce", "audit"},
    "__main__": {"cli"},
}


TOP = "policyengine.__init__"  # the package's API: a layer may read its __version__; no arrow counted


@cache
def _modules() -> dict[str, Path]:
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts): path
        for path in sorted(PACKAGE.rglob("*.py"))
        if "schemas" not in path.relative_to(PACKAGE).parts
    }


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(path: Path, *, top_level_only: bool, type_only: bool = False) -> set[str]:
    """The policyengine modules `path` imports (a name imported from a package: its submodule, if it is one).

    `type_only` adds the imports under `if TYPE_CHECKING:` (an arrow for a reader and a type checker).
    """
    found: set[str] = set()
    modules = _modules()

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in (*child.body, *child.orelse) if type_only else child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]), nested)
                continue
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("policyengine"):
                assert child.level == 0, f"{path}: relative import; the package uses absolute imports"
                if not (top_level_only and nested):
                    for alias in child.names:
                        sub = f"{child.module}.{alias.name}"
                        found.add(sub if sub in modules else child.module)
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("policyengine") and not (top_level_only and nested):
                        found.add(alias.name)
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    # A name a package re-exports is an arrow to the package's __init__ (`from policyengine.audit import X`).
    return {m if m in modules else f"{m}.__init__" for m in found if m in modules or f"{m}.__init__" in modules}


@pytest.mark.parametrize("module", sorted(_modules()))
def test_a_module_imports_only_its_own_layer_and_the_layers_below(module: str) -> None:
    path = _modules()[module]
    mine = _layer(module)
    if module.endswith("__main__"):
        mine = "__main__"
    if module == "policyengine.errors":
        mine = "errors"
    allowed = ALLOWED[mine] | {mine}
    wrong = sorted(m for m in _imports(path, top_level_only=False) if _layer(m) not in allowed and m != TOP)
    assert wrong == [], f"{module} ({mine}) imports a layer above it or beside it: {wrong}"


@pytest.mark.parametrize("arrows", ["at import time", "every import, lazy and type-only included"])
def test_there_is_no_import_cycle(arrows: str) -> None:
    every = arrows.startswith("every")
    graph = {m: _imports(p, top_level_only=not every, type_only=every) - {m, TOP} for m, p in _modules().items()}
    state: dict[str, int] = {}  # 1 visiting, 2 done
    stack: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target) :], target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                walk(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module)


def test_the_layers_are_real_folders() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    layers = {
        "values",
        "tools",
        "arguments",
        "language",
        "packs",
        "runtime",
        "enforce",
        "adapters",
        "service",
        "dryrun",
        "testing",
        "verify",
    }
    layers |= {"cli"}
    assert folders >= layers
    assert {p.name for p in PACKAGE.glob("*.py")} == {"__init__.py", "__main__.py", "errors.py"}


def test_importing_the_package_loads_no_runtime_and_no_dependency() -> None:
    code = (
        "import sys, policyengine\n"
        "heavy = ('asyncio', 'yaml', 'cerberus', 'jmespath', 're2', 'tree_sitter', 'policyengine.runtime')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('policyengine.runtime')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def test_every_exported_name_loads_and_is_its_modules_own() -> None:
    import importlib

    for name in policyengine.__all__:
        value = getattr(policyengine, name)
        if name == "__version__":
            assert isinstance(value, str) and value
            continue
        home = policyengine._LAZY.get(name, "policyengine.errors")
        assert getattr(importlib.import_module(home), name) is value, name
    assert sorted(dir(policyengine)) == sorted(policyengine.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = policyengine.Nope


def test_defining_a_tool_loads_neither_the_rule_language_nor_the_packs() -> None:
    code = (
        "import sys, policyengine.tools.definition, policyengine.runtime.registry\n"
        "above = ('policyengine.packs', 'policyengine.language', 'policyengine.arguments', 'yaml')\n"
        "print(sorted(m for m in sys.modules if m.startswith(above)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["pack", "rules", "rule-file", "calls", "tests"])
def test_the_shipped_schemas_are_found_from_a_checkout_without_an_install(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import resources

    from policyengine.packs import rule_schemas

    def not_installed(package: str) -> Any:
        raise ModuleNotFoundError(package)

    monkeypatch.setattr(resources, "files", not_installed)
    assert rule_schemas.schema_file(name).read_text("utf-8").strip()


def test_every_layer_folder_is_a_package_the_distribution_ships() -> None:
    """A folder missing from pyproject's `packages` works in a checkout and is absent from every install."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"])
    folders = {f"policyengine.{p.name}" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= listed, f"add to pyproject.toml's packages: {sorted(folders - listed)}"


def _reached(start: str) -> set[str]:
    """The modules `start` imports, directly or not, lazy and type-only imports included."""
    modules = _modules()
    seen, todo = {start}, [start]
    while todo:
        for target in _imports(modules[todo.pop()], top_level_only=False, type_only=True):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@pytest.mark.parametrize(
    ("names", "start"),
    [
        ("policyengine.packs.cache.CODE_FOLDERS", "policyengine.packs.loader"),
        ("policyengine.cli.hook.HELPER_LAYERS", "policyengine.cli.hook"),
    ],
)
def test_the_code_a_cache_fingerprints_is_every_layer_its_code_imports(names: str, start: str) -> None:
    # A layer missing here is code whose edit leaves a stale compiled pack (or a stale hook helper) in use.
    import importlib

    module, _, attribute = names.rpartition(".")
    listed = set(getattr(importlib.import_module(module), attribute))
    needed = {_layer(m) for m in _reached(start)} - {"__init__", "errors"}
    assert needed <= listed, f"{names} lacks {sorted(needed - listed)}"
    assert all((PACKAGE / layer / "__init__.py").is_file() for layer in listed), f"{names} names a folder that is gone"
