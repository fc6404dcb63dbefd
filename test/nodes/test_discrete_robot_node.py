"""discrete_robot_node: joint states at the configured rate, URDF, energy, effort commands, trajectory
tracking, robustness to bad input and to invalid parameters or model files."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytestmark = pytest.mark.ros

HANGING = [-np.pi / 2, 0.0]   # the 2-link arm's stable equilibrium: at rest it stays there
SWINGING = [-1.0, 0.5]
JOINTS = ["joint1", "joint2"]


def _positions(samples) -> np.ndarray:
    return np.array([m.position for _, m in samples])


def test_joint_states_at_the_configured_rate_with_names_description_and_energy(ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64, String

    from discrete_robot.nodes.common import LATCHED_QOS

    # released 0.57 rad from hanging, the arm swings without reaching its ±π stops, whose plastic impacts
    # remove energy (from (0.3, 0.5) it reaches them at t = 1.1 s and 4.9 s)
    node = ros.start("discrete_robot_node", params={"publish_rate": 20.0, "initial_positions": SWINGING,
                                                    "hold_on_start": False})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    samples = ros.collect_until("joint_states", JointState, lambda received: len(received) >= 60, 120.0, qos=100)
    # at the configured rate of simulated time, one state each 1/20 s (a loaded machine may run the world slower
    # than real time, and says so on /diagnostics: test_simulator_control)
    stamps = [ros.seconds(m.header.stamp) for _, m in samples]
    assert np.median(np.diff(stamps)) == pytest.approx(1.0 / 20.0, abs=1e-6), stamps
    last = samples[-1][1]
    assert list(last.name) == JOINTS and len(last.position) == 2 and len(last.velocity) == 2
    assert last.header.stamp.sec > 0
    assert np.ptp(_positions(samples)[:, 0]) > 0.1, "released from SWINGING the arm must swing"
    # transient local: a subscriber that joins late still gets the URDF
    description = ros.wait_for_message("robot_description", String, qos=LATCHED_QOS, timeout=10.0)
    urdf = ET.fromstring(description.data)
    assert [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"] == JOINTS
    energies = [m.data for _, m in ros.collect_until("discrete_robot/energy", Float64, lambda r: len(r) >= 10, 60.0)]
    assert len(energies) >= 10 and np.ptp(energies) < 1e-9 * abs(energies[0])   # conserved while it swings
    assert node.alive()


def test_commands_move_the_arm_bad_input_is_ignored_and_trajectories_are_tracked(ros):
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING, "real_time_factor": 2.0})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    at_rest = _positions(ros.collect("joint_states", JointState, 1.0))
    np.testing.assert_allclose(at_rest, np.tile(HANGING, (len(at_rest), 1)), atol=1e-9)   # no command: no motion

    # bad commands: logged, ignored, the node keeps publishing and the arm stays at rest
    ros.publish("joint_effort_commands", Float64MultiArray(data=[1.0, 2.0, 3.0]))
    ros.publish("joint_effort_commands", Float64MultiArray(data=[float("nan"), 0.0]))
    bad = JointTrajectory(joint_names=["joint1", "elbow"],
                          points=[JointTrajectoryPoint(positions=[0.0, 0.0], time_from_start=_duration(1.0))])
    ros.publish("joint_trajectory", bad)
    still = _positions(ros.collect_until("joint_states", JointState, lambda received: len(received) > 20, 60.0))
    assert len(still) > 20 and node.alive()
    np.testing.assert_allclose(still, np.tile(HANGING, (len(still), 1)), atol=1e-9)
    logged = ("expected 2 values, got 3", "finite", "unknown joint name(s) ['elbow']")
    ros.spin_until(lambda: all(line in node.log() for line in logged), 60.0)   # each as its callback comes
    log = node.log()
    assert all(line in log for line in logged), log

    # an effort command moves the arm (compare with the motion without: none), efforts report it
    ros.publish("joint_effort_commands", Float64MultiArray(data=[5.0, 0.0]))
    pushed = ros.collect_until("joint_states", JointState,
                               lambda received: received and received[-1][1].position[0] - HANGING[0] > 0.05, 60.0)
    assert _positions(pushed)[-1][0] - HANGING[0] > 0.05
    np.testing.assert_allclose(pushed[-1][1].effort, [5.0, 0.0])

    # a trajectory with its joints in the other order is tracked to its end point
    goal = {"joint1": -1.0, "joint2": 0.8}
    trajectory = JointTrajectory(joint_names=["joint2", "joint1"], points=[
        JointTrajectoryPoint(positions=[goal["joint2"], goal["joint1"]], time_from_start=_duration(1.5))])
    ros.publish("joint_trajectory", trajectory)
    ros.wait_for_message("joint_states", JointState, timeout=30.0, predicate=lambda m: np.allclose(
        m.position, [goal["joint1"], goal["joint2"]], atol=5e-3) and np.abs(m.velocity).max() < 1e-2)

    # parameters: a negative gain is refused with the reason, a valid one accepted
    request = SetParameters.Request(parameters=[ParameterMsg(name="kp", value=ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=-1.0))])
    refused = ros.call(SetParameters, "discrete_robot_node/set_parameters", request).results[0]
    assert not refused.successful and "kp" in refused.reason
    request.parameters[0].value.double_value = 50.0
    assert ros.call(SetParameters, "discrete_robot_node/set_parameters", request).results[0].successful
    assert node.alive()


def _duration(seconds: float):
    from builtin_interfaces.msg import Duration

    from discrete_robot.nodes.common import seconds_to_duration_fields

    sec, nanosec = seconds_to_duration_fields(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def test_an_invalid_model_file_or_parameter_stops_the_node_with_the_reason(ros, tmp_path):
    bad = tmp_path / "negative_mass.yaml"
    bad.write_text("name: bad\nbase: {name: base}\nlinks:\n  - {name: arm, parent: base, joint: {name: j, "
                   "type: revolute}, mass: -2.0, inertia: [0.1, 0.1, 0.1]}\n")
    node = ros.start("discrete_robot_node", params={"model_file": str(bad)})
    assert node.wait(timeout=30.0) != 0
    assert "link 'arm': mass must be a positive" in node.log()
    wrong = ros.start("discrete_robot_node", params={"initial_positions": [0.0, 0.0, 0.0]})
    assert wrong.wait(timeout=30.0) != 0
    assert "initial_positions (one per joint: joint1, joint2): expected 2 values, got 3" in wrong.log()
    integrator = ros.start("discrete_robot_node", params={"integrator": "euler"})
    assert integrator.wait(timeout=30.0) != 0
    assert "integrator must be one of discrete, discrete4, discrete6, variational, rk45" in integrator.log()
