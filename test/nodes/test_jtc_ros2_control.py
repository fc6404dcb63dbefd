"""discrete_robot_node on a URDF (``robot_description``) whose ``<ros2_control>`` tags give 2 of its 3 joints a
command interface: joint_trajectory_controller drives those two, refuses a goal naming the third as JTC refuses
an unknown joint (joint_trajectory_controller.cpp, kilted, 1698-1710), and the third holds where it was."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

ARM = (Path(__file__).resolve().parents[1] / "control" / "arm3_ros2_control.urdf").read_text()
ACTION = "joint_trajectory_controller/follow_joint_trajectory"


def _goal(names, positions, seconds: int = 1):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=seconds))])
    return goal


def test_the_controller_drives_the_ros2_control_joints_and_refuses_the_other(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"robot_description": ARM,
                                                    "initial_positions": [0.2, -0.3, 0.6],
                                                    "constraints.shoulder.goal": 0.01,
                                                    "constraints.elbow.goal": 0.01})
    state = ros.wait_for_message("joint_states", JointState, timeout=30.0)
    assert list(state.name) == ["shoulder", "elbow", "wrist"]

    refused = ros.send_goal(FollowJointTrajectory, ACTION, _goal(["shoulder", "wrist"], [0.5, 0.0]))
    assert not refused.accepted
    assert "unknown joint name(s) ['wrist']" in node.log()

    handle = ros.send_goal(FollowJointTrajectory, ACTION, _goal(["shoulder", "elbow"], [0.8, 0.5]))
    assert handle.accepted
    controller_state = ros.wait_for_message("joint_trajectory_controller/controller_state",
                                            JointTrajectoryControllerState, timeout=30.0)
    assert list(controller_state.joint_names) == ["shoulder", "elbow"]
    response = ros.goal_result(handle, 60.0)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    final = ros.wait_for_message("joint_states", JointState, timeout=30.0)
    assert final.position[0] == pytest.approx(0.8, abs=0.01) and final.position[1] == pytest.approx(0.5, abs=0.01)
    # the wrist, outside the controller, held at its start under gravity while the shoulder and elbow swung
    assert final.position[2] == pytest.approx(0.6, abs=0.005)
    assert node.alive()


def test_the_joints_parameter_then_a_controllers_file_s_win_and_a_wrong_one_stops_the_node_in_one_line(
        ros, tmp_path):
    from control_msgs.msg import JointTrajectoryControllerState

    first = ros.start("discrete_robot_node", params={"robot_description": ARM, "joints": ["wrist", "shoulder"]})
    state = ros.wait_for_message("joint_trajectory_controller/controller_state", JointTrajectoryControllerState,
                                 timeout=30.0)
    assert list(state.joint_names) == ["wrist", "shoulder"]
    first.stop()
    path = tmp_path / "ros2_controllers.yaml"
    path.write_text("arm_controller:\n  ros__parameters:\n    joints: [elbow]\n    command_interfaces: [effort]\n")
    ros.start("discrete_robot_node", params={"robot_description": ARM, "controller_name": "arm_controller",
                                             "controllers_file": str(path)})
    state = ros.wait_for_message("arm_controller/controller_state", JointTrajectoryControllerState, timeout=30.0)
    assert list(state.joint_names) == ["elbow"]
    node = ros.start("discrete_robot_node", params={"robot_description": ARM, "joints": ["shoulder", "tool"]})
    assert node.wait(30.0) == 1
    log = node.log()
    assert "joints: ['tool'] are not joints of the robot" in log and "Traceback" not in log
