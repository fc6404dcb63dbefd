"""discrete_robot_node's FollowJointTrajectory action over DDS, with an rclpy ActionClient: success with
feedback, the standard error codes, cancel and preemption; efforts as feedforward."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

ACTION = "joint_trajectory_controller/follow_joint_trajectory"
JOINTS = ["joint1", "joint2"]
HANGING = [-np.pi / 2, 0.0]


def _duration(seconds: float):
    from builtin_interfaces.msg import Duration

    from discrete_robot.nodes.common import seconds_to_duration_fields

    sec, nanosec = seconds_to_duration_fields(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def _goal(names, points, goal_tolerance=(), goal_time=0.0):
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=list(names), points=[
        JointTrajectoryPoint(positions=list(q), time_from_start=_duration(t)) for t, q in points])
    goal.goal_tolerance = list(goal_tolerance)
    goal.goal_time_tolerance = _duration(goal_time)
    return goal


def _run(ros, goal, feedback=None, timeout=30.0):
    from control_msgs.action import FollowJointTrajectory

    handle = ros.send_goal(FollowJointTrajectory, ACTION, goal, feedback=feedback)
    assert handle.accepted
    return ros.goal_result(handle, timeout)


def test_goals_succeed_with_feedback_and_fail_with_the_standard_error_codes(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    from sensor_msgs.msg import JointState

    Result = FollowJointTrajectory.Result
    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING, "time_step": 0.005,
                                                    "publish_rate": 50.0})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)

    # success: joints in the other order, feedback at the tick rate (>= 20 Hz), the goal reached within tolerance
    feedback = []
    target = {"joint1": -1.0, "joint2": 0.6}
    response = _run(ros, _goal(["joint2", "joint1"], [(1.0, [target["joint2"], target["joint1"]])]),
                    feedback=feedback.append)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert response.result.error_code == Result.SUCCESSFUL
    assert len(feedback) >= 20, f"{len(feedback)} feedback messages over a 1 s goal"
    last = feedback[-1]
    assert list(last.joint_names) == JOINTS and len(last.desired.positions) == len(last.actual.positions) == 2
    np.testing.assert_allclose(np.subtract(last.desired.positions, last.actual.positions), last.error.positions,
                               atol=1e-12)
    final = ros.wait_for_message("joint_states", JointState)
    np.testing.assert_allclose(final.position, [target["joint1"], target["joint2"]], atol=0.02)

    # an unknown joint: INVALID_JOINTS, naming it
    response = _run(ros, _goal(["joint1", "elbow"], [(1.0, [0.0, 0.0])]))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == Result.INVALID_JOINTS and "elbow" in response.result.error_string

    # non-monotonic times: INVALID_GOAL
    response = _run(ros, _goal(JOINTS, [(1.0, [0.0, 0.0]), (0.5, [0.1, 0.0])]))
    assert response.result.error_code == Result.INVALID_GOAL and "increasing" in response.result.error_string

    # a goal tolerance no controller meets, with little time to meet it: GOAL_TOLERANCE_VIOLATED, naming the joint
    tight = [JointTolerance(name="joint1", position=1e-9)]
    response = _run(ros, _goal(JOINTS, [(0.3, [-1.2, 0.3])], goal_tolerance=tight, goal_time=0.05))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == Result.GOAL_TOLERANCE_VIOLATED
    assert "joint1" in response.result.error_string
    assert node.alive()


def test_cancel_holds_the_position_and_a_new_goal_preempts_the_running_one(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)

    slow = _goal(JOINTS, [(5.0, [0.5, 0.5])])
    handle = ros.send_goal(FollowJointTrajectory, ACTION, slow)
    ros.spin_until(lambda: False, 1.0)
    cancel = handle.cancel_goal_async()
    assert ros.spin_until(cancel.done, 10.0) and cancel.result().goals_canceling
    response = ros.goal_result(handle, 10.0)
    assert response.status == GoalStatus.STATUS_CANCELED
    held = np.array([m.position for _, m in ros.collect("joint_states", JointState, 1.0)])
    assert np.ptp(held, axis=0).max() < 0.02, "after a cancel the arm holds the position it reached"
    assert np.abs(held[-1] - HANGING).max() > 0.05, "it had moved off before the cancel"

    first = ros.send_goal(FollowJointTrajectory, ACTION, slow)
    ros.spin_until(lambda: False, 0.5)
    second = ros.send_goal(FollowJointTrajectory, ACTION, _goal(JOINTS, [(1.0, HANGING)]))
    preempted = ros.goal_result(first, 10.0)
    assert preempted.status == GoalStatus.STATUS_ABORTED
    assert preempted.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "preempted" in preempted.result.error_string
    assert ros.goal_result(second, 20.0).status == GoalStatus.STATUS_SUCCEEDED
    assert node.alive()
