"""discrete_robot_node's joint_trajectory_controller over DDS, driven as MoveIt drives JTC: goals as MoveIt's
simple controller manager sends them (positions, velocities and accelerations per point, no tolerances,
header stamp 0, joints in any order), then the goals JTC rejects, a partial goal, a preemption and a cancel,
each with the result code and error string joint_trajectory_controller.cpp (kilted) gives; the controller's
state topic and query service."""

import numpy as np
import pytest

from jtc_goals import follow_joint_trajectory_goal as _goal
from jtc_goals import rest_to_rest_points

pytestmark = pytest.mark.ros

CONTROLLER = "joint_trajectory_controller"
ACTION = f"{CONTROLLER}/follow_joint_trajectory"
JOINTS = ["joint1", "joint2"]
HANGING = [-np.pi / 2, 0.0]


def moveit_goal(start, target, duration: float, names):
    """A time-parameterised rest-to-rest plan (start and target in JOINTS order) with its joints in ``names``."""
    order = [JOINTS.index(name) for name in names]
    return _goal(names, rest_to_rest_points(np.asarray(start)[order], np.asarray(target)[order], duration))


def _set(ros, name: str, value) -> None:
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
    response = ros.call(SetParameters, "discrete_robot_node/set_parameters", request)
    assert response.results[0].successful, response.results[0].reason


def test_moveit_style_goals_succeed_and_jtc_s_refusals_are_rejected(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
    from control_msgs.srv import QueryTrajectoryState
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING, "time_step": 0.005,
                                                    "publish_rate": 50.0})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)

    target = [-1.0, 0.6]
    feedback = []
    handle = ros.send_goal(FollowJointTrajectory, ACTION, moveit_goal(HANGING, target, 1.0, ["joint2", "joint1"]),
                           feedback=feedback.append)
    assert handle.accepted
    state = ros.wait_for_message(f"{CONTROLLER}/controller_state", JointTrajectoryControllerState, timeout=10.0)
    assert list(state.joint_names) == JOINTS and state.speed_scaling_factor == 1.0
    query = QueryTrajectoryState.Request()
    query.time = state.header.stamp
    answer = ros.call(QueryTrajectoryState, f"{CONTROLLER}/query_state", query)
    assert list(answer.name) == JOINTS
    if answer.success:               # sampled while the goal runs: its desired state there
        assert len(answer.position) == len(answer.velocity) == len(answer.acceleration) == 2
    response = ros.goal_result(handle, 30.0)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert response.result.error_string.startswith("Goal successfully reached!")
    assert feedback, "no feedback while the goal ran"
    indices = [f.index for f in feedback]
    assert indices == sorted(indices) and max(indices) <= 4, indices
    last = feedback[-1]
    assert list(last.joint_names) == JOINTS
    np.testing.assert_allclose(np.subtract(last.desired.positions, last.actual.positions), last.error.positions,
                               atol=1e-12)
    final = ros.wait_for_message("joint_states", JointState)
    np.testing.assert_allclose(final.position, target, atol=0.02)
    after = ros.call(QueryTrajectoryState, f"{CONTROLLER}/query_state", QueryTrajectoryState.Request())
    assert not after.success and after.message

    # what JTC rejects in its goal callback (cpp 1667-1812) is rejected, never accepted and then aborted
    for names, points in ((["joint1", "elbow"], [(1.0, [0.0, 0.0])]),              # unknown joint
                          (["joint1"], [(1.0, [0.0])]),                              # partial, not allowed
                          (JOINTS, [(1.0, [0.0, 0.0]), (0.5, [0.1, 0.0])]),          # time going back
                          (JOINTS, [(1.0, [0.0, 0.0], [0.0, 0.2])]),                 # moving at the end
                          (JOINTS, [])):                                             # no points
        assert not ros.send_goal(FollowJointTrajectory, ACTION, _goal(names, points)).accepted, (names, points)

    # a partial goal once allowed: the joint it leaves out holds where it is
    _set(ros, "allow_partial_joints_goal", True)
    held = ros.wait_for_message("joint_states", JointState).position[0]
    response = ros.goal_result(ros.send_goal(FollowJointTrajectory, ACTION, _goal(["joint2"], [(0.5, [0.2])])), 30.0)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    final = ros.wait_for_message("joint_states", JointState)
    np.testing.assert_allclose(final.position, [held, 0.2], atol=0.02)

    # tolerances no controller meets: JTC's codes, its strings first, then which joint and by how much
    tight = [JointTolerance(name="joint1", position=1e-9)]
    goal = _goal(JOINTS, [(0.3, [-1.2, 0.3])], goal_time=0.05)
    goal.goal_tolerance = tight
    response = ros.goal_result(ros.send_goal(FollowJointTrajectory, ACTION, goal), 30.0)
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
    assert response.result.error_string.startswith("Aborted due to goal_time_tolerance exceeding by ")
    assert "joint1" in response.result.error_string
    goal = _goal(JOINTS, [(0.3, [0.5, -0.5])])
    goal.path_tolerance = tight
    response = ros.goal_result(ros.send_goal(FollowJointTrajectory, ACTION, goal), 30.0)
    assert response.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert response.result.error_string.startswith("Aborted due to path tolerance violation")
    assert node.alive()


def test_preemption_and_cancel_end_goals_as_jtc_does(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)

    slow = _goal(JOINTS, [(5.0, [0.5, 0.5])])
    handle = ros.send_goal(FollowJointTrajectory, ACTION, slow)
    ros.wait_for_message("joint_states", JointState, timeout=60.0,
                         predicate=lambda m: np.abs(np.subtract(m.position, HANGING)).max() > 0.1)
    cancel = handle.cancel_goal_async()
    assert ros.spin_until(cancel.done, 10.0) and cancel.result().goals_canceling
    response = ros.goal_result(handle, 10.0)
    assert response.status == GoalStatus.STATUS_CANCELED
    assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL    # JTC: an empty result
    held = ros.collect_until("joint_states", JointState, lambda r: len(r) > 1 and ros.seconds(
        r[-1][1].header.stamp) - ros.seconds(r[0][1].header.stamp) >= 1.0, 60.0)   # 1 s of simulated time
    held = np.array([m.position for _, m in held])
    assert np.ptp(held, axis=0).max() < 0.02, "after a cancel the arm holds the position it reached"
    assert np.abs(held[-1] - HANGING).max() > 0.05, "it had moved off before the cancel"

    first = ros.send_goal(FollowJointTrajectory, ACTION, slow)
    ros.spin_until(lambda: False, 0.5)
    second = ros.send_goal(FollowJointTrajectory, ACTION, _goal(JOINTS, [(1.0, HANGING)]))
    preempted = ros.goal_result(first, 10.0)
    assert preempted.status == GoalStatus.STATUS_ABORTED
    assert preempted.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert preempted.result.error_string == "Current goal preempted by new incoming action."
    assert ros.goal_result(second, 20.0).status == GoalStatus.STATUS_SUCCEEDED

    # JTC's topic, <controller>/joint_trajectory: followed as a goal without a client
    target = [-1.2, 0.4]
    ros.publish(f"{CONTROLLER}/joint_trajectory", _goal(JOINTS, [(0.5, target)]).trajectory)
    ros.wait_for_message("joint_states", JointState, timeout=30.0, predicate=lambda m: np.allclose(
        m.position, target, atol=5e-3) and np.abs(m.velocity).max() < 1e-2)

    # allow_integration_in_goal_trajectories: a point with velocities only is integrated (trajectory.cpp 409-449);
    # refused without it
    velocity_only = _goal(JOINTS, [(0.5, [], [0.2, 0.0]), (1.0, HANGING, [0.0, 0.0])])
    assert not ros.send_goal(FollowJointTrajectory, ACTION, velocity_only).accepted
    _set(ros, "allow_integration_in_goal_trajectories", True)
    integrated = ros.send_goal(FollowJointTrajectory, ACTION, velocity_only)
    assert integrated.accepted
    assert ros.goal_result(integrated, 20.0).status == GoalStatus.STATUS_SUCCEEDED

    # a topic message while a goal runs replaces its trajectory only: the goal stays active and ends on the
    # topic's trajectory (JTC's topic_callback neither preempts nor aborts it, cpp 1381-1395)
    running = ros.send_goal(FollowJointTrajectory, ACTION, slow)
    ros.spin_until(lambda: False, 0.5)
    ros.publish(f"{CONTROLLER}/joint_trajectory", _goal(JOINTS, [(0.5, HANGING)]).trajectory)
    ended = ros.goal_result(running, 20.0)
    assert ended.status == GoalStatus.STATUS_SUCCEEDED, ended.result.error_string
    assert ended.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    reached = ros.wait_for_message("joint_states", JointState, timeout=10.0)
    assert np.abs(np.array(reached.position) - HANGING).max() < 0.05, "it ended at the topic's point, not the goal's"
    assert node.alive()
