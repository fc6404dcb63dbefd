"""Static checks of launch/, config/ and bringup: what they name exists and agrees.

`launch` is not installable everywhere (it is not on PyPI), so the launch files
are read as Python syntax trees; where `launch` is importable the files are
also built for real.
"""

import ast
import importlib
import importlib.metadata
import importlib.util
from pathlib import Path

import pytest
import yaml

from discrete_robot.ros.bringup import COMPONENTS

REPO = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
#: examples of composing the nodes (not one per capability)
EXAMPLES = {"two_arms.launch.py"}
CAPABILITY_LAUNCH_FILES = [p for p in LAUNCH_FILES if p.name not in {"bringup.launch.py", *EXAMPLES}]


def literal_calls(path: Path, function: str) -> list[ast.Call]:
    """Every call of ``function`` (by bare name) in a Python file."""
    tree = ast.parse(path.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == function]


def keyword(call: ast.Call, name: str):
    return next((ast.literal_eval(k.value) for k in call.keywords if k.arg == name), None)


def launched_nodes(path: Path) -> list[dict]:
    """package, executable, name and config of each discrete_robot Node in a launch file."""
    configs = [ast.literal_eval(c.args[0]) for c in literal_calls(path, "common_arguments")]
    nodes = []
    for call in literal_calls(path, "Node"):
        if keyword(call, "package") != "discrete_robot":
            continue
        overrides = [ast.literal_eval(a) for c in literal_calls(path, "node_parameters") for a in c.args]
        simulator = literal_calls(path, "simulator_parameters")
        overrides += [ast.literal_eval(a) for c in simulator for a in c.args] + (["publish_tf"] if simulator else [])
        nodes.append({"executable": keyword(call, "executable"), "name": keyword(call, "name"),
                      "config": configs[0] if configs else None, "overrides": overrides})
    return nodes


def bringup_includes() -> dict[str, tuple[tuple[str, ...], dict]]:
    """bringup.launch.py's CAPABILITIES: included launch file -> (launch arguments forwarded, fixed arguments)."""
    tree = ast.parse((REPO / "launch" / "bringup.launch.py").read_text())
    return ast.literal_eval(next(n.value for n in ast.walk(tree)
                                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "CAPABILITIES"))


def node_parameter_names(node_name: str) -> set[str]:
    module = importlib.import_module(f"discrete_robot.nodes.{node_name}")
    return {spec.name for spec in module.PARAMETERS}


def console_scripts() -> dict[str, str]:
    entry_points = importlib.metadata.distribution("discrete_robot").entry_points
    return {ep.name: ep.value for ep in entry_points if ep.group == "console_scripts"}


def test_there_is_a_launch_file_per_capability_and_a_bringup():
    names = {p.name for p in LAUNCH_FILES}
    assert names == {"bringup.launch.py", *EXAMPLES, *(c.launch_file for c in COMPONENTS)}


@pytest.mark.parametrize("path", CAPABILITY_LAUNCH_FILES, ids=lambda p: p.name)
def test_launched_nodes_exist_with_their_config_and_parameters(path):
    nodes = launched_nodes(path)
    assert len(nodes) == 1, f"{path.name} should start exactly one discrete_robot node"
    node = nodes[0]
    assert node["executable"] == node["name"], "node name and executable name are the same by convention"
    assert node["executable"] in console_scripts(), f"{node['executable']} is not a console_scripts entry"
    config = REPO / "config" / node["config"]
    assert config.exists(), f"{path.name} names config/{node['config']}, which does not exist"
    document = yaml.safe_load(config.read_text())
    assert list(document) == [node["name"]], f"{config.name} must have one top-level key, the node name"
    declared = node_parameter_names(node["name"])
    in_file = set(document[node["name"]]["ros__parameters"])
    assert in_file <= declared, f"{config.name} sets undeclared parameters {sorted(in_file - declared)}"
    assert set(node["overrides"]) <= declared


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.node)
def test_config_values_have_the_declared_types(component):
    """A YAML 1 where the node declares 1.0 is an integer, and ROS rejects it at startup."""
    module = importlib.import_module(component.module)
    specs = {spec.name: spec for spec in module.PARAMETERS}
    values = yaml.safe_load((REPO / "config" / component.config).read_text())[component.node]["ros__parameters"]
    for name, value in values.items():
        default = specs[name].default
        if isinstance(default, bool) or isinstance(value, bool):
            assert isinstance(value, bool) and isinstance(default, bool), name
        elif isinstance(default, float):
            assert isinstance(value, float), f"{component.config}: {name} must be written as a float ({value})"
        elif isinstance(default, list) and default:
            assert all(type(v) is type(default[0]) for v in value), name


def test_bringup_matches_the_launch_files():
    from_launch = {(n["name"], n["config"]) for p in CAPABILITY_LAUNCH_FILES for n in launched_nodes(p)}
    assert from_launch == {(c.node, c.config) for c in COMPONENTS}
    for component in COMPONENTS:
        assert launched_nodes(REPO / "launch" / component.launch_file)[0]["name"] == component.node
        assert component.node == component.node_class().NODE_NAME
    assert set(bringup_includes()) == {c.launch_file for c in COMPONENTS}


def test_every_package_file_named_by_launch_exists():
    sources = [*LAUNCH_FILES, REPO / "discrete_robot" / "ros" / "launch_support.py"]
    named = [tuple(ast.literal_eval(a) for a in call.args)
             for path in sources for call in literal_calls(path, "package_file")
             if all(isinstance(a, ast.Constant) for a in call.args)]
    assert named, "no package_file(...) found: the check would be empty"
    for parts in named:
        assert REPO.joinpath(*parts).exists(), f"launch names {'/'.join(parts)}, which does not exist"
    for path in sources:
        for call in literal_calls(path, "common_arguments"):
            files = [ast.literal_eval(call.args[0])] + [ast.literal_eval(k.value) for k in call.keywords]
            for name in files:
                assert (REPO / "config" / name).exists(), f"{path.name} names config/{name}"


def test_remapped_topics_are_the_nodes_own():
    for path in CAPABILITY_LAUNCH_FILES:
        for call in literal_calls(path, "Node"):
            remaps = keyword(call, "remappings") or []
            source = importlib.util.find_spec(f"discrete_robot.nodes.{keyword(call, 'executable')}").origin
            text = Path(source).read_text()
            for topic, _ in remaps:
                assert f'"{topic}"' in text or f"'{topic}'" in text, f"{path.name} remaps {topic}, not used by the node"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_builds_with_a_real_launch_install(path):
    pytest.importorskip("launch_ros", reason="launch_ros is not installable here; the static checks above apply")
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate_launch_description().entities


def test_bringup_gives_the_arm_model_to_the_same_nodes_as_the_launch_file():
    with_model = {name for name, (forwarded, _) in bringup_includes().items() if "model_file" in forwarded}
    assert with_model == {c.launch_file for c in COMPONENTS if c.arm_model}


def test_bringup_has_one_clock_in_the_launch_file_and_in_bringup():
    """Exactly one simulator publishes /clock; the other follows it, in both ways of starting the system."""
    fixed = {name: arguments for name, (_, arguments) in bringup_includes().items()}
    assert fixed["space_robot.launch.py"] == {"publish_clock": "false"}
    declared = {ast.literal_eval(call.args[0]) for call in literal_calls(REPO / "launch" / "space_robot.launch.py",
                                                                          "DeclareLaunchArgument")}
    assert "publish_clock" in declared
    composed = {c.node: dict(c.overrides) for c in COMPONENTS}
    assert composed["space_robot_node"] == {"publish_clock": False}
    assert composed["discrete_robot_node"].get("publish_clock", True)


def test_the_two_arm_example_has_one_clock_and_a_namespace_and_frame_prefix_per_arm():
    tree = ast.parse((REPO / "launch" / "two_arms.launch.py").read_text())
    arms = ast.literal_eval(next(n.value for n in ast.walk(tree)
                                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "ARMS"))
    assert len(arms) == 2 and sorted(arms.values()) == [False, True]
    assert {"frame_prefix", "publish_clock"} <= node_parameter_names("discrete_robot_node")
