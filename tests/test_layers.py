"""The packages depend on each other one way, also inside each package, and no module imports
itself back.

Layers, bottom to top: ``common`` <- ``robots`` <- ``derivatives`` <- ``mpc`` <- ``hardware``. A
module may import its own layer and the layers below. Inside a layer, its sub-packages (and top-
level modules) are ordered too (:data:`LEVELS`): a module imports its own level and the levels
below, never one above, so that the library part of ``mpc`` (norms, tasks, planner) never
reaches the application (``mpc.app``), and ``hardware``'s estimators, mocap and safety never
reach its transports, nor the transports its fake robots. Read from the code's own import
statements, those inside functions and under ``TYPE_CHECKING`` included: an arrow is an arrow.

Names a registry selects by name are arrows too: a lower layer never spells a module of a higher
one in a string (plug-ins above register themselves as entry points, see
:mod:`common.registry`), and every entry point names a class of a layer at or above the
registry's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["common", "robots", "derivatives", "mpc", "hardware"]

#: Inside each layer, its parts from the bottom up; a part is a module or a sub-package (with
#: all below it), or with a trailing ``$`` that package's ``__init__`` alone. Parts on one level
#: may import each other (cycles are caught apart). Every module of a layer must belong to a
#: part: a new file is placed on purpose.
LEVELS: dict[str, list[list[str]]] = {
    "common": [["common.libmujoco", "common.registry", "common.settings", "common.trajectory",
                "common.yamlfile"],
               ["common.handover", "common.hfield_contacts"], ["common$"]],
    "robots": [["robots.info", "robots.collision", "robots.statics"],
               ["robots.derive", "robots.locked", "robots.limits",
                "robots.overlay"], ["robots$"]],
    "derivatives": [["derivatives.provider_base", "derivatives.counter", "derivatives.oracle"],
                    ["derivatives.fd"],
                    ["derivatives.analytic", "derivatives.wasp"], ["derivatives.registry"],
                    ["derivatives$"]],
    "mpc": [["mpc$"], ["mpc.norms"], ["mpc.tasks"], ["mpc.planner"],
            ["mpc.app.errors", "mpc.app.schema"],
            ["mpc.app.plants", "mpc.app.commands", "mpc.app.maps"],
            ["mpc.app.config"], ["mpc.app.assembly", "mpc.app.observers"],
            ["mpc.app.record"], ["mpc.app.runtime"],
            ["mpc.app.run", "mpc.app.view", "mpc.app.plots", "mpc.app.campaign",
             "mpc.app.sysid"],
            ["mpc.app.cli"], ["mpc.app$"]],
    "hardware": [["hardware.lowlevel", "hardware.refusals", "hardware.rotations", "hardware.udp"],
                 ["hardware.map_receiver"],
                 ["hardware.estimation", "hardware.mocap", "hardware.safety"],
                 ["hardware.unitree", "hardware.lcm"], ["hardware.gamepad", "hardware.ros2"],
                 ["hardware.fake"], ["hardware$"]],
}


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


def _files() -> dict[str, Path]:
    return {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}


def import_graph() -> dict[str, set[str]]:
    files = _files()
    return {name: _imports(path, name, set(files)) for name, path in files.items()}


def _rank(name: str) -> tuple[int, int]:
    """(layer, level inside the layer) of a module; the level of the longest matching part."""
    layer = name.split(".")[0]
    best, level = -1, -1
    for i, parts in enumerate(LEVELS.get(layer, [[layer]])):
        for part in parts:
            exact = part.endswith("$")
            part = part.rstrip("$")
            if (name == part or (not exact and name.startswith(part + "."))) and len(part) > best:
                best, level = len(part), i
    return LAYERS.index(layer), level


def unplaced(graph: dict[str, set[str]]) -> list[str]:
    return sorted(name for name in graph if _rank(name)[1] < 0)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if _rank(b) > _rank(a))


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


def named_modules(path: Path) -> set[str]:
    """Modules of the project named in the file's string constants (``"pkg.mod:Class"``,
    ``"pkg.mod"``), the way registries and ``import_module`` name them."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                    ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    pattern = re.compile(rf"^((?:{'|'.join(LAYERS)})(?:\.\w+)*)(?::\w+)?$")
    return {m.group(1) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings and (m := pattern.match(node.value))}


def entry_points() -> dict[str, dict[str, str]]:
    """The project's plug-in entry points by group, as declared in pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project.get("entry-points", {})


def test_no_import_from_a_lower_layer_or_level_to_a_higher_one():
    graph = import_graph()
    assert len(graph) > 100  # the whole code base was read
    assert unplaced(graph) == []
    assert upward_imports(graph) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_no_module_names_a_module_of_a_higher_layer_or_level():
    files = _files()
    upward = sorted(f"{name} names {target}" for name, path in files.items()
                    for target in named_modules(path) if _rank(target) > _rank(name))
    assert upward == []


def test_every_plug_in_entry_point_names_a_class_above_the_registries():
    groups = entry_points()
    assert {"legged_mpc.plants", "legged_mpc.command_sources", "legged_mpc.observers",
            "legged_mpc.safety", "legged_mpc.map_sources"} <= set(groups)
    for group, targets in groups.items():
        for name, target in targets.items():
            module = target.partition(":")[0]
            assert (ROOT / (module.replace(".", "/") + ".py")).exists(), f"{group} {name}"
            assert _rank(module) >= _rank("mpc.app"), f"{group} {name}: {target}"


def test_the_checks_find_a_planted_upward_import_and_cycle():
    graph = import_graph()
    assert "robots.info" in graph["mpc.app.plants.sim_plant"]  # real arrows are read
    graph["mpc.app.config"] = graph["mpc.app.config"] | {"hardware.safety"}
    graph["mpc.planner.ilqr"] = graph["mpc.planner.ilqr"] | {"mpc.app.schema"}
    graph["robots.info"] = graph["robots.info"] | {"robots.locked"}
    graph["robots.locked"] = graph["robots.locked"] | {"robots.info"}
    graph["mpc.stray"] = set()
    assert upward_imports(graph) == ["mpc.app.config -> hardware.safety",
                                     "mpc.planner.ilqr -> mpc.app.schema",
                                     "robots.info -> robots.locked"]
    assert cycles(graph) == ["robots.info -> robots.locked -> robots.info"]
    assert unplaced({"mpc.stray": set(), "mpc.tasks.x": set()}) == ["mpc.stray"]


def test_the_string_check_finds_a_planted_module_name(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""Docstrings may name hardware.unitree freely."""\n'
                       'PLANTS = {"udp": "hardware.unitree.udp_plant:UnitreeUdpPlant"}\n'
                       'label = "hardware is fun"\n')
    assert named_modules(planted) == {"hardware.unitree.udp_plant"}
