"""The import floors of DESIGN.md "Layout", checked on the source with `ast`.

Every import statement counts, including those inside functions and under `TYPE_CHECKING`: a
lazy import is still a dependency, and a cycle through one is still a cycle.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

import harnesskit

PACKAGE = Path(harnesskit.__file__).parent
#: Top-level modules that form the value floor (value types, errors, the display seam).
VALUE_MODULES = {"errors", "messages", "testing", "_repr", "_json", "_lazy"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    """The node a module belongs to: `values`, a subpackage name, `cli`, or `api` (the top)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "api"
    head = parts[1]
    return "values" if head in VALUE_MODULES else head


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = module.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
        base = ".".join([*anchor, *([base] if base else [])])
    names = [f"{base}.{a.name}" for a in node.names]
    # `from harnesskit.x import y`: y is a submodule or a name of harnesskit.x.
    return [n if _is_module(n) else base for n in names]


def _imports() -> list[tuple[str, str, str, int]]:
    """(importing file relative to the package, importing module, imported module, line)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                if target == "harnesskit" or target.startswith("harnesskit."):
                    rel = path.relative_to(PACKAGE).as_posix()
                    out.append((rel, module, target, node.lineno))
    return out


def _edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rel, module, target, line in _imports():
        a, b = _layer(module), _layer(target)
        if a == b:
            continue
        edges[(a, b)].append(f"{rel}:{line} imports {target}")
    return edges


def _cycle(edges: dict[tuple[str, str], list[str]]) -> list[str] | None:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_walk_sees_imports_inside_functions():
    inside = [(rel, t) for rel, _, t, _ in _imports() if rel == "models/openai_compat.py"]
    assert ("models/openai_compat.py", "harnesskit.models.base") in inside


def test_no_cycle_between_subpackages():
    edges = _edges()
    cycle = _cycle(edges)
    if cycle:
        why = [w for a, b in itertools.pairwise(cycle) for w in edges[(a, b)][:3]]
        raise AssertionError(f"import cycle {' -> '.join(cycle)}:\n" + "\n".join(why))


def test_value_floor_imports_nothing_above_it():
    bad = [w for (a, b), why in _edges().items() if a == "values" for w in why]
    assert bad == []


def test_models_know_only_the_value_types():
    bad = [w for (a, b), why in _edges().items() if a == "models" and b != "values" for w in why]
    assert bad == []


def test_domains_use_only_the_public_api():
    bad = [w for (a, b), why in _edges().items() if a == "domains" and b != "api" for w in why]
    assert bad == []


def test_core_never_imports_domains():
    bad = [w for (a, b), why in _edges().items() if b == "domains" and a != "cli" for w in why]
    assert bad == []
