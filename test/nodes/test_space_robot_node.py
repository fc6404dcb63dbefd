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
    still = [m for _, m in ros.collect_until("space_robot/base_pose", PoseStamped, lambda r: len(r) > 10, 60.0)]
    assert len(still) > 10 and all(m.header.frame_id == "world" for m in still)
    assert max(np.abs(_position(m)).max() for m in still) < 1e-12
    assert max(np.abs(_quaternion(m) - [1.0, 0.0, 0.0, 0.0]).max() for m in still) < 1e-12

    # Arm 1's shoulder pushes its link about the link's x axis, which is the base's -z axis
    # (the link's z axis points along base +x): the base must turn the other way, about +z.
    command = np.zeros(12)
    command[0] = 20.0
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=command.tolist()))
    # 1.5 s of simulated time on (a loaded machine may take longer to simulate them)
    moved = [m for _, m in ros.collect_until("space_robot/base_pose", PoseStamped, lambda r: r and ros.seconds(
        r[-1][1].header.stamp) >= ros.seconds(still[-1].header.stamp) + 1.5, 120.0)]
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
    logged = ("expected 12 values", "finite", "unknown body 'arm7_link1'")
    ros.spin_until(lambda: all(line in node.log() for line in logged), 60.0)   # each as its callback comes
    assert node.alive()
    log = node.log()
    assert all(line in log for line in logged), log
    at_rest = ros.wait_for_message("space_robot/base_pose", PoseStamped)
    assert np.abs(_position(at_rest)).max() < 1e-12, "an ignored command moved the robot"

    push = WrenchStamped()
    push.header.frame_id = "base"
    push.wrench.force.y = 100.0
    ros.publish("space_robot/external_wrench", push)
    pushed = ros.collect_until("space_robot/base_pose", PoseStamped, lambda r: r and ros.seconds(
        r[-1][1].header.stamp) >= ros.seconds(at_rest.header.stamp) + 1.0, 120.0)
    position = _position(pushed[-1][1])
    assert position[1] > 1e-3 and abs(position[0]) < 1e-9 and abs(position[2]) < 1e-9
    assert node.alive()


def test_joint_velocities_and_efforts_are_published_and_a_zero_quaternion_is_refused(ros):
    """issues 26 and 22: joint_states carry the joint rates and the generalised forces (the torque command plus
    the loads' share); set_state refuses an all-zero base orientation, which is no rotation, and objects (issue
    38: this simulator has no scene)."""
    from discrete_robot_interfaces.srv import SetSimulationState
    from geometry_msgs.msg import Pose
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    ros.start("space_robot_node", params=FAST)
    ros.wait_for_message("space_robot/joint_states", JointState, timeout=30.0)
    command = np.zeros(12)
    command[0] = 5.0
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=command.tolist()))
    state = ros.wait_for_message("space_robot/joint_states", JointState, timeout=10.0,
                                 predicate=lambda m: len(m.velocity) == 12 and abs(m.velocity[0]) > 1e-3)
    np.testing.assert_allclose(state.effort, command, atol=1e-12)   # no external load: efforts = the command

    request = SetSimulationState.Request(set_base=True)
    request.base_pose.orientation.w = 0.0
    refused = ros.call(SetSimulationState, "space_robot/simulation/set_state", request)
    assert not refused.success and "base_pose.orientation: a zero quaternion" in refused.message, refused.message

    objects = ros.call(SetSimulationState, "space_robot/simulation/set_state",
                       SetSimulationState.Request(object_names=["box"], object_poses=[Pose()]))
    assert not objects.success and objects.message.startswith("object_names: "), objects.message


def test_momentum_drift_is_net_of_the_impulse_of_the_paper_loads(ros):
    """issue 26: with the paper's tip forces the momenta change by the loads' impulse; the diagnostics' drift is
    that change less the impulse (dP/dt = sum F), near zero, while the impulse itself grows."""
    from diagnostic_msgs.msg import DiagnosticArray

    ros.start("space_robot_node", params={**FAST, "apply_paper_loads": True})

    def values(predicate):
        status = ros.wait_for_message("/diagnostics", DiagnosticArray, timeout=60.0, predicate=lambda m: (
            "space_robot_node" in m.status[0].name and predicate(
                {kv.key: float(kv.value) for kv in m.status[0].values}))).status[0]
        return {kv.key: float(kv.value) for kv in status.values}

    late = values(lambda v: v["sim_time_s"] > 2.0)
    # the paper's forces: |[1,-1,1] + [2,-2,-2]| N = 3.32 N at most, in the tips' turning frames: over t > 2 s,
    # an impulse of the order of seconds times newtons
    assert late["linear_impulse_of_loads_N_s"] > 1.0
    assert late["linear_momentum_drift_kg_m_s"] < 1e-3 * late["linear_impulse_of_loads_N_s"], late
    assert late["angular_momentum_drift_kg_m2_s"] < 1e-2, late
