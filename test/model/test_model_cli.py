"""``python -m discrete_robot model info``: the JSON keys the issue names, values checked against the file."""

import json
import re
import subprocess
import sys

import pytest

from discrete_robot.cli import main
from discrete_robot.model.example_robots import example_robot_path

KEYS = {"joints", "links", "total_mass", "dof", "joint_names"}
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
