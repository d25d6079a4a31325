"""The production modules import one another without circles or arrows back up (issue 31, item 4).

Every production module (all but tests/ and bench/) is parsed with `ast`; an import anywhere in it,
at module level or inside a function, is an edge, because a function-level import is the same
dependency paid later. Imports under `if TYPE_CHECKING:` are not edges: they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_PRODUCTION = {"tests", "bench", "docs", "runs", "data"}

# ARCHITECTURE.md's layers (app, ui, evaluation, agent, models and tools, rag, config; "a module imports only
# from layers below it"), as far as they hold today: a package may not import the ones named beside it.
# models/ and tools/ are not ordered: the picture puts models above tools, yet tools call the model client.
FORBIDDEN_IMPORTS: dict[str, tuple[str, ...]] = {
    "ui": ("app",),
    "evaluation": ("app", "ui"),
    "agent": ("app", "ui", "evaluation"),
    "models": ("app", "ui", "evaluation", "agent"),
    "tools": ("app", "ui", "evaluation", "agent"),
    "rag": ("app", "ui", "evaluation", "agent", "tools"),
    "config": ("app", "ui", "evaluation", "agent", "models", "tools", "rag"),
}


def production_modules(root: Path = ROOT) -> dict[str, Path]:
    """Map every production module's dotted name to its file (a package is its `__init__.py`)."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[0] in NOT_PRODUCTION or parts[0].startswith("."):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    """True for `TYPE_CHECKING` and `typing.TYPE_CHECKING`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node`, skipping the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for branch in child.orelse:
                yield from _imports_in(branch)
        else:
            yield from _imports(child)


def _imports_in(statement: ast.stmt) -> Iterator[ast.Import | ast.ImportFrom]:
    """The statement itself when it is an import, else the imports under it."""
    if isinstance(statement, ast.Import | ast.ImportFrom):
        yield statement
    else:
        yield from _imports(statement)


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` names, relative levels resolved."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The production modules one import statement loads.

    `from p import name` loads the submodule `p.name` when there is one, else the package `p`.
    """
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & known
    base = _base(module, is_package, node)
    loaded = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names}
    return loaded & known


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Edges from each production module to the production modules it imports."""
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(module, is_package, node, known)
        edges.discard(module)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
            elif successor not in index:
                index[successor] = low[successor] = len(index)
                stack.append(successor)
                on_stack.add(successor)
                work.append((successor, iter(sorted(graph[successor]))))
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
    return sorted(found)


def _describe(component: tuple[str, ...], graph: dict[str, set[str]]) -> str:
    """One component and its inner edges, for a failure message a reader can act on."""
    inner = [f"    {a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
    return "  {" + ", ".join(component) + "}\n" + "\n".join(inner)


def _arrows_back_up(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a lower layer into one ARCHITECTURE.md puts above it."""
    found = []
    for module, targets in sorted(graph.items()):
        forbidden = FORBIDDEN_IMPORTS.get(module.split(".")[0], ())
        found += [f"  {module} -> {t}" for t in sorted(targets) if t.split(".")[0] in forbidden]
    return found


def test_the_checker_sees_the_project() -> None:
    graph = import_graph(production_modules())
    assert {"config", "app", "agent.pipeline", "tools.core.context"} <= graph.keys()
    assert "tools.core.context" in graph["tools.core.executor"]


def test_function_level_and_relative_imports_count_type_checking_ones_do_not(tmp_path) -> None:
    sources = {
        "pkg/__init__.py": "from . import low\n",
        "pkg/low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import high\n"
                      "else:\n    import pkg.side\n",
        "pkg/high.py": "def later():\n    from .low import name\n",
        "pkg/side.py": "from pkg.sub import deep\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from .. import high\nfrom ..low import x\n",
        "tests/test_x.py": "import pkg.high\n",
    }
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(production_modules(tmp_path))
    assert graph == {"pkg": {"pkg.low"}, "pkg.low": {"pkg.side"}, "pkg.high": {"pkg.low"},
                     "pkg.side": {"pkg.sub.deep"}, "pkg.sub": set(), "pkg.sub.deep": {"pkg.high", "pkg.low"}}
    assert cycles(graph) == [("pkg.high", "pkg.low", "pkg.side", "pkg.sub.deep")]


def test_no_import_cycles() -> None:
    graph = import_graph(production_modules())
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(_describe(c, graph) for c in found)


def test_no_arrow_back_up() -> None:
    arrows = _arrows_back_up(import_graph(production_modules()))
    assert not arrows, "imports from a lower layer into a higher one:\n" + "\n".join(arrows)
