"""joint_trajectory_controller's parameters on discrete_robot_node: JTC's names and defaults, and a MoveIt
config's ros2_controllers.yaml (as the MoveIt Setup Assistant writes it) applying through ``controllers_file``."""

import textwrap

import pytest

pytestmark = pytest.mark.ros

#: a MoveIt Setup Assistant ros2_controllers.yaml for the two-link arm, effort-controlled
ROS2_CONTROLLERS_YAML = textwrap.dedent("""\
    # This config file is used by ros2_control
    controller_manager:
      ros__parameters:
        update_rate: 100  # Hz

        arm_controller:
          type: joint_trajectory_controller/JointTrajectoryController


        joint_state_broadcaster:
          type: joint_state_broadcaster/JointStateBroadcaster

    arm_controller:
      ros__parameters:
        joints:
          - joint1
          - joint2
        command_interfaces:
          - effort
        state_interfaces:
          - position
          - velocity
        allow_nonzero_velocity_at_trajectory_end: true
        constraints:
          goal_time: 0.5
          stopped_velocity_tolerance: 0.02
          joint1:
            trajectory: 0.5
            goal: 0.001
          joint2: {goal: 0.002}
        gains:
          joint1: {p: 100.0, d: 10.0, i: 0.0}
          joint2: {p: 100.0, d: 10.0, i: 0.0}
""")


def _parameters(ros, names):
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    response = ros.call(GetParameters, "discrete_robot_node/get_parameters", GetParameters.Request(names=names))
    return dict(zip(names, (parameter_value_to_python(v) for v in response.values), strict=True))


def test_jtc_s_parameters_have_its_names_and_defaults(ros):
    from sensor_msgs.msg import JointState

    ros.start("discrete_robot_node")
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    # joint_trajectory_controller_parameters.yaml (kilted) 75-127, 203-236
    assert _parameters(ros, ["constraints.goal_time", "constraints.stopped_velocity_tolerance",
                             "constraints.joint1.goal", "constraints.joint2.trajectory", "allow_partial_joints_goal",
                             "allow_nonzero_velocity_at_trajectory_end", "action_monitor_rate",
                             "interpolation_method", "allow_integration_in_goal_trajectories",
                             "cmd_timeout", "constraints.decelerate_on_cancel",
                             "constraints.joint1.max_deceleration_on_cancel",
                             "speed_scaling.initial_scaling_factor"]) == {
        "constraints.goal_time": 0.0, "constraints.stopped_velocity_tolerance": 0.01, "constraints.joint1.goal": 0.0,
        "constraints.joint2.trajectory": 0.0, "allow_partial_joints_goal": False,
        "allow_nonzero_velocity_at_trajectory_end": False, "action_monitor_rate": 20.0,
        "interpolation_method": "splines", "allow_integration_in_goal_trajectories": False,
        "cmd_timeout": 0.0, "constraints.decelerate_on_cancel": False,
        "constraints.joint1.max_deceleration_on_cancel": 0.0, "speed_scaling.initial_scaling_factor": 1.0}
    # gains.<joint>.p and .d (yaml 136-152, default 0.0); 0 here: the node's kp, kd
    assert _parameters(ros, ["gains.joint1.p", "gains.joint2.d"]) == {"gains.joint1.p": 0.0, "gains.joint2.d": 0.0}


def test_a_moveit_ros2_controllers_yaml_applies_and_the_node_s_own_parameters_come_first(ros, tmp_path):
    from action_msgs.msg import GoalStatus
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(ROS2_CONTROLLERS_YAML)
    node = ros.start("discrete_robot_node", params={"controller_name": "arm_controller",
                                                    "controllers_file": str(path),
                                                    "constraints.stopped_velocity_tolerance": 0.05})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    assert _parameters(ros, ["constraints.goal_time", "constraints.stopped_velocity_tolerance",
                             "constraints.joint1.goal", "constraints.joint1.trajectory", "constraints.joint2.goal",
                             "constraints.joint2.trajectory", "allow_nonzero_velocity_at_trajectory_end"]) == {
        "constraints.goal_time": 0.5, "constraints.stopped_velocity_tolerance": 0.05, "constraints.joint1.goal": 0.001,
        "constraints.joint1.trajectory": 0.5, "constraints.joint2.goal": 0.002,
        "constraints.joint2.trajectory": 0.0, "allow_nonzero_velocity_at_trajectory_end": True}
    assert _parameters(ros, ["gains.joint1.p", "gains.joint1.d", "gains.joint2.p"]) == {
        "gains.joint1.p": 100.0, "gains.joint1.d": 10.0, "gains.joint2.p": 100.0}

    # a trajectory ending at 0.5 rad/s: the file allows it; held there, the arm keeps a velocity error of 0.5 rad/s,
    # outside the goal velocity tolerance, so the file's goal_time (0.5 s) ends it; JTC's defaults would refuse it
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=["joint1", "joint2"], points=[
        JointTrajectoryPoint(positions=[-1.4, 0.1], velocities=[0.5, 0.0], time_from_start=Duration(sec=1))])
    handle = ros.send_goal(FollowJointTrajectory, "arm_controller/follow_joint_trajectory", goal)
    assert handle.accepted
    response = ros.goal_result(handle, 60.0)
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
    assert response.result.error_string.startswith("Aborted due to goal_time_tolerance exceeding by 0.5")
    assert node.alive()


def test_a_controllers_file_s_listed_controllers_are_served_with_their_parameters_under_their_names(ros, tmp_path):
    from sensor_msgs.msg import JointState

    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(ROS2_CONTROLLERS_YAML)
    # controller_manager lists arm_controller: created as controller_manager would, though controller_name
    # (joint_trajectory_controller) is not in the file; its parameters under its name
    node = ros.start("discrete_robot_node", params={"controllers_file": str(path)})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    assert _parameters(ros, ["arm_controller.constraints.goal_time", "arm_controller.constraints.joint1.goal",
                             "arm_controller.gains.joint1.p"]) == {
        "arm_controller.constraints.goal_time": 0.5, "arm_controller.constraints.joint1.goal": 0.001,
        "arm_controller.gains.joint1.p": 100.0}
    assert ("controller arm_controller (joint_trajectory_controller/JointTrajectoryController): joints joint1, "
            "joint2") in node.log()
    node.stop()


def test_a_controllers_file_without_a_list_or_the_controller_stops_the_node_in_one_line(ros, tmp_path):
    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(ROS2_CONTROLLERS_YAML[ROS2_CONTROLLERS_YAML.index("arm_controller:\n  ros__parameters"):])
    node = ros.start("discrete_robot_node", params={"controllers_file": str(path)})
    assert node.wait(30.0) == 1
    log = node.log()
    assert "no 'joint_trajectory_controller: ros__parameters:' section" in log and "arm_controller" in log
    assert "Traceback" not in log


def test_speed_scaling_stays_one_with_effort_commands_as_in_jtc(ros):
    # cpp 1071-1092: with an effort command interface JTC creates no ~/speed_scaling_input, keeps the factor at 1.0
    # and warns when speed_scaling.initial_scaling_factor is not 1.0
    from control_msgs.msg import JointTrajectoryControllerState

    node = ros.start("discrete_robot_node", params={"speed_scaling.initial_scaling_factor": 0.5})
    state = ros.wait_for_message("joint_trajectory_controller/controller_state", JointTrajectoryControllerState,
                                 timeout=30.0)
    assert state.speed_scaling_factor == 1.0
    assert "speed scaling is currently only supported for position interfaces" in node.log()
    assert node.alive()
