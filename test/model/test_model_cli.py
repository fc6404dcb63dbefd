"""``python -m discrete_robot model info``: the JSON keys the issue names, values checked against the file."""

import json
import os
import re
import subprocess
import sys

import pytest

from big_models import chain_urdf
from discrete_robot.cli import main
from discrete_robot.model.example_robots import example_robot_path

KEYS = {"joints", "links", "total_mass", "dof", "joint_names", "step_cost_s"}
AT_Q = {"mass_matrix", "gravity_torques", "link_poses"}
JOINT_KEYS = {"name", "type", "lower", "upper", "velocity", "effort", "damping", "friction", "mimic_leader"}


def _info(capsys, *args) -> dict:
    assert main(["model", "info", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_info_lists_joints_links_and_masses_of_the_file(capsys):
    path = example_robot_path("panda")
    info = _info(capsys, "--model", str(path))
    assert set(info) == KEYS
    assert all(set(joint) == JOINT_KEYS for joint in info["joints"])
    masses = [float(m) for m in re.findall(r'<mass value="([^"]+)"', path.read_text())]
    assert info["total_mass"] == pytest.approx(sum(masses), rel=1e-12)
    assert info["dof"] == 8 and len(info["joint_names"]) == 8
    assert info["step_cost_s"] > 0.0        # measured: its size belongs to the benchmark
    follower = next(joint for joint in info["joints"] if joint["name"] == "panda_finger_joint2")
    assert follower["mimic_leader"] == "panda_finger_joint1" and follower["type"] == "prismatic"


def test_info_at_q_adds_mass_matrix_gravity_and_poses(capsys):
    q = ["0", "-0.5", "0", "-2", "0", "1.5", "0.7", "0.02"]
    info = _info(capsys, "--model", str(example_robot_path("panda")), "--q", *q)
    assert set(info) == KEYS | AT_Q
    # the two fingers (0.015 kg each) slide with the leader: their 2 x 0.015 kg on its diagonal
    assert info["mass_matrix"][7][7] == pytest.approx(0.03, rel=1e-12)
    assert len(info["gravity_torques"]) == 8
    assert info["link_poses"]["panda_link1"]["xyz"] == pytest.approx([0.0, 0.0, 0.333], abs=1e-12)


def test_text_form_is_a_table_and_a_bad_q_is_one_line():
    path = str(example_robot_path("ur5"))
    text = subprocess.run([sys.executable, "-m", "discrete_robot", "model", "info", "--model", path],
                          capture_output=True, text=True, check=True).stdout
    assert re.search(r"^name\s+type\s+lower\s+upper\s+velocity\s+effort\s+damping\s+friction\s+mimic_leader$", text,
                     re.MULTILINE)
    bad = subprocess.run([sys.executable, "-m", "discrete_robot", "model", "info", "--model", path, "--q", "0", "1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "--q (one per joint" in bad.stderr


# ----------------------------------------------------------------------------------------------- refusals


def _refused(*args, limit_address_space: bool = False) -> str:
    """The one line a refused ``python -m discrete_robot ...`` prints, after checking its exit status 2;
    ``limit_address_space``: run it with 1 GB of address space (``ulimit -v``)."""
    command = [sys.executable, "-m", "discrete_robot", *args]
    if limit_address_space:
        command = ["bash", "-c", 'ulimit -v 1048576; exec "$@"', "bash", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def chain_10000(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "chain10000.urdf"
    path.write_text(chain_urdf(10_000))
    return path


@pytest.mark.parametrize("command", [["model", "info"], ["discrete", "simulate", "--steps", "2"]])
def test_a_10000_link_urdf_is_refused_from_its_count_in_1_gb(chain_10000, command):
    line = _refused(*command, "--model", str(chain_10000), limit_address_space=True)
    assert line == f"error: {chain_10000}: 10001 links, more than the 1000 a model may have"


def test_model_info_with_10000_values_of_q_is_one_line_in_1_gb(chain_10000):
    q = ["0.1"] * 10_000
    line = _refused("model", "info", "--model", str(chain_10000), "--q", *q, limit_address_space=True)
    assert "10001 links, more than the 1000" in line
    line = _refused("model", "info", "--model", str(example_robot_path("ur5")), "--q", *q, limit_address_space=True)
    assert "--q (one per joint" in line and "expected 6 values, got 10000" in line


def test_space_simulate_refuses_a_model_beyond_the_step_memory(tmp_path):
    path = tmp_path / "chain300.urdf"
    path.write_text(chain_urdf(300))
    line = _refused("space", "simulate", "--config", str(path))
    assert "300 joints need 1.3e+11 bytes per discrete step" in line


@pytest.mark.parametrize(("expression", "limit"), [
    ("${9**9**9}", r"(CPU-time limit of \d+ s|wall-clock limit of \d+ s)"),
    ("${len('x' * 10**10)}", r"memory limit of 1024 MB"),
])
def test_a_runaway_xacro_expression_is_refused_naming_the_limit(tmp_path, expression, limit):
    path = tmp_path / "runaway.urdf.xacro"
    path.write_text(f'<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a{expression}"/>'
                    "</robot>")
    line = _refused("model", "info", "--model", str(path))
    assert re.fullmatch(rf"error: xacro file {re.escape(str(path))}: expansion .*{limit}", line), line


def test_a_xacro_including_a_fifo_is_refused_naming_the_included_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    path = tmp_path / "robot.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="fifo"/>'
                    '<link name="a"/></robot>')
    line = _refused("model", "info", "--model", str(path))
    assert line == f"error: xacro file {path}: included file {tmp_path / 'fifo'}: a FIFO, not a regular file"
