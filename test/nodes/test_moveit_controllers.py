"""A MoveIt config's ros2_controllers.yaml drives discrete_robot_node as controller_manager would: the stock Panda
URDF (example-robot-data) and panda_moveit_config's layout (fixtures/panda_ros2_controllers.yaml), each listed
controller created from its type; a 7-joint goal as MoveIt sends it (positions and velocities) reaches its end."""

from pathlib import Path

import pytest

from discrete_robot.model.example_robots import example_robot_path
from panda_controllers import ARM, CONTROLLERS, joint_commands_drive_the_arm, panda_msg, panda_now, start_panda

pytestmark = pytest.mark.ros

TARGET = [0.4, -0.3, 0.2, -1.6, 0.1, 1.3, 0.6]


def test_the_panda_arm_controller_follows_a_moveit_goal_of_positions_and_velocities(ros):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    node = start_panda(ros)
    start = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    log = node.log()
    assert ("controller panda_arm_controller (joint_trajectory_controller/JointTrajectoryController): joints "
            + ", ".join(ARM)) in log
    assert "controller joint_state_broadcaster (joint_state_broadcaster/JointStateBroadcaster)" in log

    # a MoveIt-timed path: a midpoint moving at the mean velocity, the end at rest
    q0 = [start.position[list(start.name).index(joint)] for joint in ARM]
    middle = [(a + b) / 2.0 for a, b in zip(q0, TARGET, strict=True)]
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=ARM, points=[
        JointTrajectoryPoint(positions=middle, velocities=[(b - a) / 2.0 for a, b in zip(q0, TARGET, strict=True)],
                             time_from_start=Duration(sec=1)),
        JointTrajectoryPoint(positions=TARGET, velocities=[0.0] * 7, time_from_start=Duration(sec=2))])
    handle = ros.send_goal(FollowJointTrajectory, "panda_arm_controller/follow_joint_trajectory", goal)
    assert handle.accepted
    response = ros.goal_result(handle, 120.0)
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    final = ros.wait_for_message("joint_states", JointState, timeout=30.0, predicate=panda_msg)
    reached = [final.position[list(final.name).index(joint)] for joint in ARM]
    assert reached == pytest.approx(TARGET, abs=0.01)
    assert node.alive()


def test_an_unknown_type_and_an_interface_claimed_twice_stop_the_node_in_one_line(ros, tmp_path):
    arm = "\n".join(["arm_controller:", "  ros__parameters:", f"    joints: {ARM}"])
    for listed, sections, expected in [
        ("    admittance_controller: {type: admittance_controller/AdmittanceController}\n", "",
         "controller 'admittance_controller' has type 'admittance_controller/AdmittanceController', which this "
         "simulator does not create"),
        ("    wrist_controller: {type: joint_trajectory_controller/JointTrajectoryController}\n",
         "wrist_controller:\n  ros__parameters:\n    joints: [panda_joint7]\n",
         "Unable to activate controller 'wrist_controller' since the command interface 'panda_joint7/position' "
         "will be used by another controller that is being activated ('arm_controller')")]:
        path = tmp_path / "ros2_controllers.yaml"
        path.write_text("controller_manager:\n  ros__parameters:\n"
                        "    arm_controller: {type: joint_trajectory_controller/JointTrajectoryController}\n"
                        f"{listed}{arm}\n{sections}")
        node = start_panda(ros, path)
        assert node.wait(60.0) == 1
        log = node.log()
        assert expected in log and "Traceback" not in log


def test_a_forward_command_controller_s_positions_are_tracked(ros, tmp_path):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(CONTROLLERS.read_text().replace(
        "position_controllers/GripperActionController", "forward_command_controller/ForwardCommandController"
    ).replace("    joint: panda_finger_joint1", "    joints: [panda_finger_joint1]\n    interface_name: position"))
    node = start_panda(ros, path)
    ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert ("controller panda_hand_controller (forward_command_controller/ForwardCommandController): joints "
            "panda_finger_joint1") in node.log()
    ros.publish("panda_hand_controller/commands", Float64MultiArray(data=[0.02]))
    sent = panda_now(ros)
    finger = ros.wait_for_message("joint_states", JointState, timeout=60.0,
                                  predicate=lambda m: panda_msg(m) and ros.seconds(m.header.stamp) > sent + 2.0)
    assert finger.position[list(finger.name).index("panda_finger_joint1")] == pytest.approx(0.02, abs=0.002)
    assert node.alive()


def test_joint_commands_drive_the_joints_no_controller_claims_as_topic_based_ros2_control_sends_them(ros, tmp_path):
    from sensor_msgs.msg import JointState

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(CONTROLLERS.read_text().replace("    panda_hand_controller:\n      type: position_controllers/"
                                                    "GripperActionController\n", ""))
    # topic_based_ros2_control's default topics, kept apart from a stack's own joint_state_broadcaster
    node = start_panda(ros, path, joint_commands_topic="robot_joint_command", joint_states_topic="robot_joint_states")
    start = ros.wait_for_message("robot_joint_states", JointState, timeout=60.0, predicate=panda_msg)
    finger = list(start.name).index("panda_finger_joint1")
    for _ in range(2):
        ros.publish("robot_joint_command", JointState(name=["panda_finger_joint1", "panda_joint1"],
                                                      position=[0.03, 1.0]))
    sent = panda_now(ros, "robot_joint_states")
    state = ros.wait_for_message("robot_joint_states", JointState, timeout=60.0,
                                 predicate=lambda m: panda_msg(m) and ros.seconds(m.header.stamp) > sent + 2.0)
    assert state.position[finger] == pytest.approx(0.03, abs=0.002)
    # panda_joint1 is the arm controller's: its command ignored, with one warning, the joint held where it started
    assert state.position[0] == pytest.approx(start.position[0], abs=0.01)
    log = node.log()
    assert log.count("robot_joint_command: panda_joint1 is claimed by an active controller") == 1
    assert node.alive()


def test_initial_positions_by_joint_name_and_a_start_outside_the_limits_clamped_with_a_warning(ros, tmp_path):
    from sensor_msgs.msg import JointState

    # a parameters file's map, as a robot stack writes it; panda_joint4's limits are [-3.0718, -0.0698] rad
    params = tmp_path / "params.yaml"
    params.write_text("discrete_robot_node:\n  ros__parameters:\n"
                      "    initial_positions: {panda_joint2: -0.5, panda_joint6: 1}\n")
    node = ros.start("discrete_robot_node", params={"model_file": str(example_robot_path("panda"))},
                     params_file=params)
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    names = list(state.name)
    assert state.position[names.index("panda_joint2")] == pytest.approx(-0.5, abs=0.01)
    assert state.position[names.index("panda_joint6")] == pytest.approx(1.0, abs=0.01)
    assert state.position[names.index("panda_joint4")] == pytest.approx(-0.0698, abs=0.01)
    log = node.log()
    assert "initial_positions: panda_joint4 = 0 is outside its limits [-3.0718, -0.0698]; it starts at -0.0698" in log
    assert "panda_joint2 = " not in log
    assert node.alive()


def test_the_robot_description_comes_from_the_latched_topic_with_the_parameter_s_size_limit(ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from discrete_robot.nodes.qos import LATCHED_QOS

    urdf = example_robot_path("panda").read_text()
    node = ros.start("discrete_robot_node", params={"robot_description_topic": "robot_description"})
    ros.publish("robot_description", String(data=urdf), qos=LATCHED_QOS, wait_for_subscriber=60.0)
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert list(state.name) == [*ARM, "panda_finger_joint1"]
    assert node.alive()
    node.stop()

    # 10 MB, the most a model file or the parameter may hold
    large = ros.start("discrete_robot_node", params={"robot_description_topic": "big_description"})
    ros.publish("big_description", String(data=urdf + " " * 10 * 2 ** 20), qos=LATCHED_QOS,
                wait_for_subscriber=60.0)
    assert large.wait(60.0) == 1
    log = large.log()
    assert "robot_description: larger than 10485760 bytes (10 MB)" in log and "Traceback" not in log


def test_without_controllers_every_joint_holds_and_joint_commands_drive_the_arm(ros, tmp_path):
    from sensor_msgs.msg import JointState

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text("controller_manager:\n  ros__parameters:\n    joint_state_broadcaster:\n"
                    "      type: joint_state_broadcaster/JointStateBroadcaster\n")
    node = start_panda(ros, path)
    start = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    t0 = ros.seconds(start.header.stamp)
    held = ros.wait_for_message("joint_states", JointState, timeout=60.0,
                                predicate=lambda m: panda_msg(m) and ros.seconds(m.header.stamp) > t0 + 1.0)
    assert list(held.position) == pytest.approx(list(start.position), abs=0.005)     # gravity held, not falling
    joint_commands_drive_the_arm(ros, start)
    assert node.alive()


def test_an_srdf_group_state_is_the_start_and_initial_positions_by_name_go_over_it(ros, tmp_path):
    from sensor_msgs.msg import JointState

    params = tmp_path / "params.yaml"
    params.write_text("discrete_robot_node:\n  ros__parameters:\n    initial_positions: {panda_joint7: 0.3}\n")
    node = ros.start("discrete_robot_node", params={
        "model_file": str(example_robot_path("panda")), "initial_pose_name": "ready",
        "initial_pose_srdf": str(Path(__file__).resolve().parent / "fixtures" / "panda.srdf")}, params_file=params)
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert list(state.position[:7]) == pytest.approx([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.3], abs=0.01)
    assert "outside its limits" not in node.log()
    node.stop()
    unknown = ros.start("discrete_robot_node", params={
        "model_file": str(example_robot_path("panda")), "initial_pose_name": "home",
        "initial_pose_srdf": str(Path(__file__).resolve().parent / "fixtures" / "panda.srdf")})
    assert unknown.wait(60.0) == 1
    assert "no group_state 'home' (it has: ready)" in unknown.log() and "Traceback" not in unknown.log()


def test_without_a_controllers_file_the_arm_controller_takes_the_joints_that_are_not_fingers(ros):
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"model_file": str(example_robot_path("panda"))})
    ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    log = node.log()
    line = next(line for line in log.splitlines() if "controller joint_trajectory_controller (" in line)
    assert line.endswith("(joint_trajectory_controller/JointTrajectoryController): joints " + ", ".join(ARM))
    assert "controller gripper_controller (position_controllers/GripperActionController)" in log
    assert node.alive()


def test_the_panda_hand_controller_closes_to_a_gripper_goal_and_both_fingers_settle(ros, tmp_path):
    from control_msgs.action import GripperCommand
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(CONTROLLERS.read_text() + "    goal_tolerance: 0.001\n")
    node = start_panda(ros, path)
    ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert "controller panda_hand_controller (position_controllers/GripperActionController): joints " \
           "panda_finger_joint1" in node.log()
    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = 0.01, 20.0
    handle = ros.send_goal(GripperCommand, "panda_hand_controller/gripper_cmd", goal)
    assert handle.accepted
    result = ros.goal_result(handle, 120.0).result
    assert result.reached_goal and not result.stalled
    assert result.position == pytest.approx(0.01, abs=0.001)
    sent = panda_now(ros)
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0,
                                 predicate=lambda m: panda_msg(m) and ros.seconds(m.header.stamp) > sent + 1.0)
    assert state.position[list(state.name).index("panda_finger_joint1")] == pytest.approx(0.01, abs=0.002)
    # the mimic follower (panda_finger_joint2 = panda_finger_joint1) on TF: the right finger's offset from the hand
    right = ros.wait_for_message("/tf", TFMessage, timeout=60.0, predicate=lambda m: any(
        t.child_frame_id == "panda_rightfinger" for t in m.transforms))
    offset = next(t for t in right.transforms if t.child_frame_id == "panda_rightfinger").transform.translation
    assert -offset.y == pytest.approx(0.01, abs=0.002)
    assert node.alive()


def test_the_broadcaster_publishes_dynamic_joint_states_with_the_joint_states_values(ros):
    """joint_state_broadcaster's second topic (kilted: published by default): each joint's position, velocity and
    effort interfaces carry the values of the joint state of the same stamp (the paused simulator republishes one
    state, so both topics are compared at the same simulated time)."""
    from control_msgs.msg import DynamicJointState
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger

    node = start_panda(ros)
    ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert ros.call(Trigger, "simulation/pause", Trigger.Request()).success
    state = ros.wait_for_message("joint_states", JointState, timeout=30.0, predicate=panda_msg)
    dynamic = ros.wait_for_message("dynamic_joint_states", DynamicJointState, timeout=30.0,
                                   predicate=lambda msg: msg.header.stamp == state.header.stamp)
    assert list(dynamic.joint_names) == list(state.name)
    for k, values in enumerate(dynamic.interface_values):
        assert list(values.interface_names) == ["position", "velocity", "effort"]
        assert list(values.values) == [state.position[k], state.velocity[k], state.effort[k]]
    assert node.alive()
