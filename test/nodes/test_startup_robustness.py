"""Start-up input that hung or crashed the nodes (issue 22), over the node executables: each is refused at start in
one FATAL line naming the parameter or file and the reason, exit status 1, no traceback, and never a hang (a
FIFO or /dev/zero as model_file, a 100 MB or 10^5-deep YAML, non-UTF-8 text, names against the ROS rules, a
300-link chain, an initial state out of proportion to the model)."""

import copy
import os

import pytest
import yaml

from discrete_robot.model.description import package_config_path

pytestmark = pytest.mark.ros

#: s: the longest a refused start may take on a loaded machine (imports and the ROS context included)
START_LIMIT_S = 120.0


def _refused(ros, executable: str, params: dict) -> str:
    """The FATAL line of ``executable`` started with ``params``; fails on a hang, another exit or a traceback."""
    node = ros.start(executable, params=params)
    status = node.wait(timeout=START_LIMIT_S)
    log = node.log()
    assert status == 1, f"exit status {status}\n{log}"
    assert "Traceback" not in log, log
    fatal = [line for line in log.splitlines() if "[FATAL]" in line]
    assert len(fatal) == 1, log
    return fatal[0]


def _chain(links: int, gravity=(0.0, -9.81, 0.0)) -> dict:
    model = yaml.safe_load(package_config_path("planar_2link.yaml").read_text())
    template = model["links"][1]
    model["links"] = [model["links"][0]] + [   # each link its own copy: a shared list would be a YAML alias
        copy.deepcopy({**template, "name": f"link{k + 1}", "parent": f"link{k}",
                       "joint": {**template["joint"], "name": f"joint{k + 1}"}}) for k in range(1, links)]
    model["gravity"] = list(gravity)
    model.pop("fingertip")
    return model


@pytest.fixture
def hostile_files(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    large = tmp_path / "large.yaml"
    with large.open("wb") as stream:
        stream.truncate(100 * 2 ** 20)   # 100 MB (sparse)
    deep = tmp_path / "deep.yaml"
    deep.write_text("a:\n" + "".join(f"{'  ' * k}- \n" for k in range(1, 2000)))
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes(package_config_path("planar_2link.yaml").read_bytes().replace(b"# Planar", "# Planaré".encode(
        "latin-1")))
    return {"a FIFO": (fifo, "FIFO"), "a device": ("/dev/zero", "character device"),
            "100 MB": (large, "larger than"), "10^3 deep": (deep, "nested deeper"),
            "latin-1": (latin, "not UTF-8")}


@pytest.mark.parametrize("executable", ["discrete_robot_node", "space_robot_node", "manipulation_node"])
@pytest.mark.parametrize("case", ["a FIFO", "a device", "100 MB", "latin-1"])
def test_a_hostile_model_file_is_refused_in_one_line(ros, hostile_files, executable, case):
    path, reason = hostile_files[case]
    fatal = _refused(ros, executable, {"model_file": str(path)})
    assert reason in fatal and str(path) in fatal, fatal


def test_a_deep_yaml_and_a_hostile_scene_file_are_refused_in_one_line(ros, hostile_files):
    path, reason = hostile_files["10^3 deep"]
    fatal = _refused(ros, "discrete_robot_node", {"model_file": str(path)})
    assert "Recursion" not in fatal and "nested deeper than 64 levels" in fatal, fatal
    for case in ("a FIFO", "latin-1"):
        path, reason = hostile_files[case]
        fatal = _refused(ros, "manipulation_node", {"scene_file": str(path)})
        assert reason in fatal and f"scene file {path}" in fatal or f"scene_file {path}" in fatal, fatal


@pytest.mark.parametrize(("executable", "name", "value"), [
    ("discrete_robot_node", "controller_name", "a b/../c"),
    ("discrete_robot_node", "frame_prefix", "arm one/"),
    ("space_robot_node", "frame_prefix", "/space//robot"),
    ("manipulation_node", "controller_name", "arm//controller"),
])
def test_names_against_the_ros_rules_are_refused_naming_the_parameter(ros, executable, name, value):
    fatal = _refused(ros, executable, {name: value})
    assert f"{name} must be" in fatal and ("ROS naming rules" in fatal or "relative name" in fatal), fatal


def test_a_300_link_chain_is_refused_at_start_with_the_reason(ros, tmp_path):
    path = tmp_path / "chain300.yaml"
    path.write_text(yaml.safe_dump(_chain(300)))
    fatal = _refused(ros, "discrete_robot_node", {"model_file": str(path)})
    assert "300 joints need" in fatal and "bytes per discrete step" in fatal, fatal


HANGING = [-1.5707963267948966, 0.0]


@pytest.mark.parametrize(("params", "gravity", "reason"), [
    ({"initial_velocities": [1e6, 1e6]}, (0.0, -9.81, 0.0), "out of proportion"),
    ({"initial_positions": HANGING}, (0.0, -1e308, 0.0), "not finite"),
    ({"initial_positions": HANGING}, (0.0, -1e12, 0.0), "out of proportion"),
    # horizontal, the potential energy is 0 whatever the gravity: the trial step refuses the start
    ({}, (0.0, -1e12, 0.0), "the initial state cannot be simulated"),
])
def test_an_initial_state_out_of_proportion_to_the_model_is_refused(ros, tmp_path, params, gravity, reason):
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(_chain(2, gravity)))
    fatal = _refused(ros, "discrete_robot_node", {"model_file": str(path), **params})
    assert reason in fatal, fatal


def test_a_real_time_factor_below_the_floor_is_refused_at_start(ros):
    fatal = _refused(ros, "discrete_robot_node", {"real_time_factor": 1e-6})
    assert "real_time_factor must be 0 (as fast as possible) or at least 0.01" in fatal, fatal
