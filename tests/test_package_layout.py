"""The package's layering, read from its source with ast (nothing is imported).

Every import counts: module-level, inside functions, under `if TYPE_CHECKING:` (a type-only
import is still a dependency between the two modules, so it may not close a circle either)
and importlib.import_module of a literal name; relative imports are resolved against the
importing module. The pyspark rule looks at runtime
imports only, since a type-only import never loads the JVM bindings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "fleet_rebalance"

# Packages of pure rules: plain Python in, plain Python out, testable without a JVM. Their
# Spark glue (if any) lives in pipeline/, metrics/, storage/ or report/.
PURE_PACKAGES = (
    "fleet_rebalance.assignors",
    "fleet_rebalance.replay",
    "fleet_rebalance.capture",
    "fleet_rebalance.generate",
    "fleet_rebalance.agent",
)
# Pure rules outside those packages say so in their name (metrics/*_rules.py).
PURE_SUFFIX = "_rules"
# The bottom layer every other may import (the expected failures and the config they
# quote): it reaches none of the layers above it, nor Spark.
BOTTOM = ("fleet_rebalance.errors", "fleet_rebalance.config")
ABOVE_BOTTOM = (
    "fleet_rebalance.cli",
    "fleet_rebalance.pipeline",
    "fleet_rebalance.storage",
    "fleet_rebalance.metrics",
    "fleet_rebalance.replay",
    "fleet_rebalance.report",
    "pyspark",
)


@dataclass(frozen=True)
class Import:
    """One import statement's target, as the module that holds it sees it."""

    target: str
    line: int
    type_only: bool


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `root` (a src directory), by dotted name."""
    return {_module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _dynamic(node: ast.AST) -> ast.Import | None:
    """`importlib.import_module("a.b")` or `__import__("a.b")` with a literal absolute name,
    as the import statement it amounts to."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    first = node.args[0]
    if called not in ("import_module", "__import__") or not isinstance(first, ast.Constant):
        return None
    if not isinstance(first.value, str) or first.value.startswith("."):
        return None
    return ast.Import(names=[ast.alias(name=first.value)], lineno=node.lineno)


def _statements(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import anywhere in `tree` (statements, and dynamic imports of a literal name),
    with whether it sits under TYPE_CHECKING."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, type_only))
        dynamic = _dynamic(node)
        if dynamic is not None:
            found.append((dynamic, type_only))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return found


def _known(name: str, modules: dict[str, Path]) -> str:
    """`name` or its longest prefix that is a module of the package (an imported function's
    module); the name itself when it is outside the package."""
    probe = name
    while probe and probe not in modules:
        probe = probe.rpartition(".")[0]
    return probe or name


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """What module `name` (source at `path`) imports, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []
    for node, type_only in _statements(tree):
        if isinstance(node, ast.Import):
            found.extend(
                Import(_known(alias.name, modules), node.lineno, type_only) for alias in node.names
            )
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            target = submodule if submodule in modules else _known(base, modules)
            found.append(Import(target, node.lineno, type_only))
    return found


def import_graph(root: Path, package: str) -> dict[str, list[Import]]:
    """Each module of the package with the imports it makes (any target, in or out of it)."""
    modules = find_modules(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def _inside(graph: dict[str, list[Import]], name: str) -> list[str]:
    """The package modules `name` imports (self-imports of a package's own names excluded)."""
    return sorted({i.target for i in graph[name] if i.target in graph and i.target != name})


def import_cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
    """One concrete cycle (a -> b -> ... -> a) per strongly connected set of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan; the package is ~200 modules, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in _inside(graph, node):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            connect(name)
    return sorted(_cycle_in(graph, set(c)) for c in components)


def _cycle_in(graph: dict[str, list[Import]], component: set[str]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected set."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in _inside(graph, node):
            if nxt == start:
                return [*paths[node], start]
            if nxt in component and nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} in {sorted(component)}")


def import_path(
    graph: dict[str, list[Import]], start: str, reached: str, *, runtime_only: bool = False
) -> list[str] | None:
    """A shortest chain of imports from module `start` to a module named `reached` or inside
    it (outside the package too: "pyspark"), or None."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for imp in graph.get(node, []):
            if runtime_only and imp.type_only:
                continue
            if imp.target == reached or imp.target.startswith(reached + "."):
                return [*paths[node], imp.target]
            if imp.target in graph and imp.target not in paths:
                paths[imp.target] = [*paths[node], imp.target]
                queue.append(imp.target)
    return None


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return import_graph(SRC, PACKAGE)


def test_no_import_cycle(graph):
    """Given: every import of every fleet_rebalance module.
    Then: no module reaches itself through imports.
    Expected: no cycle (each one found is listed as a -> b -> a)."""
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_pipeline_never_imports_the_command_line(graph):
    """Given: the pipeline modules. Then: no chain of imports, direct or through other modules,
    reaches fleet_rebalance.cli (the module or the package). Expected: none."""
    chains = [
        chain
        for name in sorted(graph)
        if _under(name, "fleet_rebalance.pipeline")
        and (chain := import_path(graph, name, "fleet_rebalance.cli")) is not None
    ]
    assert not chains, "pipeline reaches the command line:\n" + "\n".join(
        " -> ".join(c) for c in chains
    )


def _pure(name: str) -> bool:
    return any(_under(name, pure) for pure in PURE_PACKAGES) or name.endswith(PURE_SUFFIX)


def test_pure_packages_never_import_pyspark(graph):
    """Given: the pure-rules packages (PURE_PACKAGES) and modules (named *_rules). Then: no
    runtime chain of imports from them reaches pyspark. Expected: none."""
    chains = [
        chain
        for name in sorted(graph)
        if _pure(name)
        and (chain := import_path(graph, name, "pyspark", runtime_only=True)) is not None
    ]
    assert not chains, "pure modules reach pyspark:\n" + "\n".join(" -> ".join(c) for c in chains)


def test_the_bottom_layer_imports_nothing_above_it(graph):
    """Given: errors and config, which every layer imports. Then: no chain of imports from
    them reaches a layer above (ABOVE_BOTTOM) or pyspark. Expected: none."""
    chains = [
        chain
        for name in BOTTOM
        for above in ABOVE_BOTTOM
        if (chain := import_path(graph, name, above)) is not None
    ]
    assert not chains, "the bottom layer reaches up:\n" + "\n".join(" -> ".join(c) for c in chains)


def test_the_walker_sees_the_package(graph):
    """Given: the real package. Then: it holds the modules named in the layering rules and
    resolves a relative import (assignors/__init__.py: `from .registry import ...`).
    Expected: those modules present, the relative import resolved to its module."""
    for prefix in ("fleet_rebalance.pipeline", *PURE_PACKAGES, *BOTTOM):
        assert any(_under(name, prefix) for name in graph), prefix
    assert any(name.endswith(PURE_SUFFIX) for name in graph)
    targets = {i.target for i in graph["fleet_rebalance.assignors"]}
    assert "fleet_rebalance.assignors.registry" in targets


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_walker_resolves_relative_function_and_type_only_imports(tmp_path):
    """Given: a package `toy` whose a.py imports b relatively inside a function, whose b.py
    imports sub.c under TYPE_CHECKING and whose sub/c.py imports pyspark and (relatively) `a`
    at module level, and whose d.py calls importlib.import_module on a literal name and on a
    variable. Then: the graph holds those edges; a -> b -> sub.c -> a is reported as
    one cycle; the pyspark chain from a exists only when type-only imports count.
    Expected: literal edges and chains below."""
    _write(
        tmp_path,
        {
            "toy/__init__.py": "",
            "toy/a.py": "def f():\n    from . import b\n    return b\n",
            "toy/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.sub.c import g\n"
            ),
            "toy/sub/__init__.py": "",
            "toy/sub/c.py": "import pyspark.sql\nfrom . import h\nfrom .. import a\n",
            "toy/d.py": (
                "import importlib\n"
                "def load(name):\n"
                "    importlib.import_module('toy.sub.c')\n"
                "    return importlib.import_module(name)\n"
            ),
        },
    )
    toy = import_graph(tmp_path, "toy")
    assert toy["toy.a"] == [Import("toy.b", 2, False)]
    assert [i for i in toy["toy.b"] if i.target.startswith("toy")] == [Import("toy.sub.c", 3, True)]
    assert [i.target for i in toy["toy.sub.c"]] == ["pyspark.sql", "toy.sub", "toy.a"]
    assert import_cycles(toy) == [["toy.a", "toy.b", "toy.sub.c", "toy.a"]]
    assert import_path(toy, "toy.a", "pyspark") == [
        "toy.a",
        "toy.b",
        "toy.sub.c",
        "pyspark.sql",
    ]
    assert import_path(toy, "toy.a", "pyspark", runtime_only=True) is None
    # A literal name given to import_module counts; a computed one cannot be followed.
    assert toy["toy.d"] == [Import("importlib", 1, False), Import("toy.sub.c", 3, False)]


def test_the_walker_finds_no_cycle_in_a_layered_package(tmp_path):
    """Given: top imports middle imports bottom, bottom imports nothing of the package.
    Then/Expected: no cycle, and a chain from top to bottom."""
    _write(
        tmp_path,
        {
            "toy/__init__.py": "",
            "toy/top.py": "from toy import middle\n",
            "toy/middle.py": "from .bottom import X\n",
            "toy/bottom.py": "import json\nX = 1\n",
        },
    )
    toy = import_graph(tmp_path, "toy")
    assert import_cycles(toy) == []
    assert import_path(toy, "toy.top", "toy.bottom") == ["toy.top", "toy.middle", "toy.bottom"]
