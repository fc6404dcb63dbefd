"""The package's import graph runs one way (issue 27, item 3): no circles, no upward arrows, pushing/ in order.

Every module of discrete_robot/ is parsed with ``ast`` (so imports inside functions, the lazy ones, count as much as
those at the top) and each ``import``/``from ... import`` statement is an arrow to the module it names: the
module ``from a.b import c`` names is ``a.b`` (its ``__init__``), and ``a.b.c`` as well when that is a module.
A circle is a strongly connected component of more than one module (scipy's ``connected_components``). The
layers, bottom to top: the core (each capability's package and the shared modules), then ``nodes/`` (ROS nodes
that delegate to the core), then ``ros/`` (client-side tooling and the process launcher); an arrow never points
up. The command line (``cli.py``) dispatches to each capability's CLI, ``ros.cli`` included, by module name
(importlib), not by an import statement: it is the entry point above every layer.
"""

import ast
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

PACKAGE = Path(__file__).resolve().parents[2] / "discrete_robot"

#: the layers of the package, bottom to top, by a module's first component below ``discrete_robot``
LAYERS = {"nodes": 1, "ros": 2}          # everything else: the core, layer 0

#: pushing/'s modules bottom to top, as pushing/__init__.py lists them (issue 27: geometry -> kernels -> prediction
#: -> simulation); a module imports only modules of its own layer or below, and every module of pushing/ has a layer
PUSHING_LAYERS = (
    ("solvers", {"power_program", "minimum_power"}),
    ("geometry", {"polygon"}),
    ("kernels", {"compiled", "push_kernels"}),
    ("support", {"support", "object_model"}),
    ("prediction", {"prediction"}),
    ("simulation", {"simulation", "streaming"}),
    ("interface", {"requests", "commands", "cli"}),
)


def module_names(root: Path) -> dict[str, Path]:
    """Every module under the package directory ``root``, by dotted name (a package as its ``__init__``)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_names(name: str, path: Path) -> set[str]:
    """The dotted names each import statement of the module ``name`` (at ``path``) names, relative ones resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parents + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports (itself excluded)."""
    modules = module_names(root)
    return {name: {target for target in imported_names(name, path) if target in modules and target != name}
            for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    names = sorted(graph)
    index = {name: i for i, name in enumerate(names)}
    rows = [index[a] for a in names for _ in graph[a]]
    columns = [index[b] for a in names for b in sorted(graph[a])]
    adjacency = csr_array((np.ones(len(rows)), (rows, columns)), shape=(len(names), len(names)))
    count, labels = connected_components(adjacency, directed=True, connection="strong")
    components = [[name for name, label in zip(names, labels, strict=True) if label == k] for k in range(count)]
    return sorted(component for component in components if len(component) > 1)


def layer(name: str) -> int:
    parts = name.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def upward_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Every arrow from a module to one in a higher layer (:data:`LAYERS`)."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer(b) > layer(a))


def pushing_order_violations(graph: dict[str, set[str]]) -> list[str]:
    """pushing/'s modules without a layer, and every arrow from one of them to a higher layer
    (:data:`PUSHING_LAYERS`)."""
    prefix = "discrete_robot.pushing."
    rank = {prefix + module: k for k, (_, modules) in enumerate(PUSHING_LAYERS) for module in modules}
    inside = [name for name in graph if name.startswith(prefix)]
    unplaced = [f"{name} has no layer in PUSHING_LAYERS" for name in sorted(inside) if name not in rank]
    upward = [f"{a} ({PUSHING_LAYERS[rank[a]][0]}) -> {b} ({PUSHING_LAYERS[rank[b]][0]})"
              for a in sorted(inside) if a in rank for b in sorted(graph[a]) if rank.get(b, -1) > rank[a]]
    return unplaced + upward


def test_the_package_has_no_import_circles():
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in found)


def test_no_arrow_points_up_from_the_core_to_nodes_or_ros_or_from_nodes_to_ros():
    found = upward_arrows(import_graph())
    assert not found, "upward arrows:\n" + "\n".join(found)


def test_pushing_runs_from_geometry_through_kernels_and_prediction_to_simulation():
    found = pushing_order_violations(import_graph())
    assert not found, "pushing/ out of order:\n" + "\n".join(found)


# ------------------------------------------------------------------------------- the checks themselves


@pytest.fixture
def toy(tmp_path):
    """A package discrete_robot/ with a core module, a capability, a node and a ROS tool, no arrow yet."""
    root = tmp_path / "discrete_robot"
    for module in ("__init__", "shared", "cap/__init__", "cap/kernels", "cap/simulation", "nodes/__init__",
                   "nodes/node", "ros/__init__", "ros/tool", "pushing/__init__", "pushing/polygon",
                   "pushing/prediction"):
        (root / f"{module}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{module}.py").write_text("")
    return root


def write(root: Path, module: str, text: str) -> None:
    (root / f"{module}.py").write_text(text)


def test_a_lazy_relative_import_closing_a_loop_is_a_circle(toy):
    write(toy, "cap/simulation", "from discrete_robot.cap.kernels import step\n")
    write(toy, "cap/kernels", "def warm_up():\n    from .simulation import simulate\n")
    write(toy, "shared", "import discrete_robot.cap.kernels\n")
    graph = import_graph(toy)
    assert graph["discrete_robot.cap.kernels"] == {"discrete_robot.cap.simulation"}
    assert circles(graph) == [["discrete_robot.cap.kernels", "discrete_robot.cap.simulation"]]


def test_a_package_init_importing_its_module_that_imports_the_package_is_a_circle(toy):
    write(toy, "cap/__init__", "from . import kernels\n")
    write(toy, "cap/kernels", "from discrete_robot.cap import simulation\n")
    assert circles(import_graph(toy)) == [["discrete_robot.cap", "discrete_robot.cap.kernels"]]


def test_arrows_up_from_the_core_or_from_nodes_are_found_and_arrows_down_are_not(toy):
    write(toy, "ros/tool", "from discrete_robot.nodes.node import x\nimport discrete_robot.shared\n")
    write(toy, "nodes/node", "from discrete_robot.cap import simulation\n")
    assert upward_arrows(import_graph(toy)) == []
    write(toy, "nodes/node", "def main():\n    from ..ros.tool import launch\n")
    write(toy, "cap/simulation", "import discrete_robot.nodes\n")
    assert upward_arrows(import_graph(toy)) == ["discrete_robot.cap.simulation -> discrete_robot.nodes",
                                                "discrete_robot.nodes.node -> discrete_robot.ros.tool"]
    assert circles(import_graph(toy)) == [["discrete_robot.nodes.node", "discrete_robot.ros.tool"]]


def test_pushing_modules_without_a_layer_or_importing_a_higher_one_are_found(toy):
    write(toy, "pushing/prediction", "from discrete_robot.pushing.polygon import outline\n")
    assert pushing_order_violations(import_graph(toy)) == []
    write(toy, "pushing/polygon", "from discrete_robot.pushing import prediction\n")
    write(toy, "pushing/extra", "")
    assert pushing_order_violations(import_graph(toy)) == [
        "discrete_robot.pushing.extra has no layer in PUSHING_LAYERS",
        "discrete_robot.pushing.polygon (geometry) -> discrete_robot.pushing.prediction (prediction)"]
