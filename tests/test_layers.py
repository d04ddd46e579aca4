"""The packages depend on each other one way, and no module imports itself back.

Layers, bottom to top: ``robots`` <- ``derivatives`` <- ``mpc`` <- ``hardware``. A module may
import its own layer and the layers below; ``mpc`` reaches hardware plug-ins only by name
(registries of ``"module:Class"`` strings). Read from the code's own import statements, those
inside functions and under ``TYPE_CHECKING`` included: an arrow is an arrow.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["robots", "derivatives", "mpc", "hardware"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """Project modules that the file imports: ``from a.b import c`` is an arrow to ``a.b.c``
    when that is a module, else to ``a.b``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.add(sub if sub in modules else target)
    return {m for m in found if m in modules and m != module}


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}
    return {name: _imports(path, name, set(files)) for name, path in files.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    layer = {name: LAYERS.index(name.split(".")[0]) for name in graph}
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if layer[b] > layer[a])


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every back edge of a depth-first search, as the cycle it closes."""
    found = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_no_import_from_a_lower_layer_to_a_higher_one():
    graph = import_graph()
    assert len(graph) > 100  # the whole code base was read
    assert upward_imports(graph) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_checks_find_a_planted_upward_import_and_cycle():
    graph = import_graph()
    assert "robots.info" in graph["mpc.sim_plant"]  # real arrows are read
    graph["mpc.config"] = graph["mpc.config"] | {"hardware.safety"}
    graph["robots.info"] = graph["robots.info"] | {"robots.locked"}
    graph["robots.locked"] = graph["robots.locked"] | {"robots.info"}
    assert upward_imports(graph) == ["mpc.config -> hardware.safety"]
    assert cycles(graph) == ["robots.info -> robots.locked -> robots.info"]
