"""space_robot_node: joint states and base pose, the base's reaction to joint torques, robustness to bad input."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.urdf import to_urdf

pytestmark = pytest.mark.ros

FAST = {"publish_rate": 50.0, "time_step": 0.01, "real_time_factor": 1.0}


def _quaternion(pose) -> np.ndarray:
    o = pose.pose.orientation
    return np.array([o.w, o.x, o.y, o.z])


def _position(pose) -> np.ndarray:
    p = pose.pose.position
    return np.array([p.x, p.y, p.z])


def test_joint_states_base_pose_description_and_the_base_reacting_to_a_joint_torque(ros):
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String

    from discrete_robot.nodes.common import LATCHED_QOS

    node = ros.start("space_robot_node", params=FAST)
    states = ros.wait_for_message("space_robot/joint_states", JointState, timeout=30.0)
    model = load_model(package_config_path("space_robot_dual_arm.yaml"))
    urdf = ET.fromstring(to_urdf(model))
    assert list(states.name) == [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"]
    assert len(states.position) == 12
    description = ros.wait_for_message("space_robot/robot_description", String, qos=LATCHED_QOS)
    assert ET.fromstring(description.data).get("name") == "space_robot_dual_arm"

    # Without a command the robot stays at rest: the base does not move.
    still = [m for _, m in ros.collect("space_robot/base_pose", PoseStamped, 1.0)]
    assert len(still) > 10 and all(m.header.frame_id == "world" for m in still)
    assert max(np.abs(_position(m)).max() for m in still) < 1e-12
    assert max(np.abs(_quaternion(m) - [1.0, 0.0, 0.0, 0.0]).max() for m in still) < 1e-12

    # Arm 1's shoulder pushes its link about the link's x axis, which is the base's -z axis
    # (the link's z axis points along base +x): the base must turn the other way, about +z.
    command = np.zeros(12)
    command[0] = 20.0
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=command.tolist()))
    moved = [m for _, m in ros.collect("space_robot/base_pose", PoseStamped, 1.5)]
    last = _quaternion(moved[-1])
    assert last[3] * last[0] > 1e-4, f"the base did not turn about +z in reaction: {last}"
    assert np.linalg.norm(_position(moved[-1])) > 1e-5, "the base CoM did not move in reaction"
    momentum = ros.wait_for_message("space_robot/momentum", Float64MultiArray)
    assert momentum.layout.dim[0].label.split()[:6] == ["P_x", "P_y", "P_z", "L_x", "L_y", "L_z"]
    np.testing.assert_allclose(momentum.data[:6], 0.0, atol=1e-9)   # internal torques: momentum stays zero
    assert momentum.data[6] > 0.0                                      # ... but kinetic energy grows
    assert node.alive()


def test_bad_commands_are_ignored_and_external_wrenches_push_the_base(ros):
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    node = ros.start("space_robot_node", params=FAST)
    ros.wait_for_message("space_robot/joint_states", JointState, timeout=30.0)
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=[1.0, 2.0]))
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=[float("nan")] * 12))
    unknown = WrenchStamped()
    unknown.header.frame_id = "arm7_link1"
    unknown.wrench.force.x = 5.0
    ros.publish("space_robot/external_wrench", unknown)
    ros.collect("space_robot/base_pose", PoseStamped, 0.5)
    assert node.alive()
    log = node.log()
    assert "expected 12 values" in log and "finite" in log and "unknown body 'arm7_link1'" in log
    at_rest = ros.wait_for_message("space_robot/base_pose", PoseStamped)
    assert np.abs(_position(at_rest)).max() < 1e-12, "an ignored command moved the robot"

    push = WrenchStamped()
    push.header.frame_id = "base"
    push.wrench.force.y = 100.0
    ros.publish("space_robot/external_wrench", push)
    pushed = ros.collect("space_robot/base_pose", PoseStamped, 1.0)
    position = _position(pushed[-1][1])
    assert position[1] > 1e-3 and abs(position[0]) < 1e-9 and abs(position[2]) < 1e-9
    assert node.alive()
