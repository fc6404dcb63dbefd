"""manipulation_node over DDS: an action client pushes the object to a goal with the simulated arm.

The planar 2-link arm (its scene: config/table_scene_planar_2link.yaml) at a 2 ms step; its fingertip starts on
the object's +x side, so the short case pushes the object 4 cm towards -x."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

READY = [-0.5, 1.0]  # config/table_scene_planar_2link.yaml's arm_ready_positions
START = np.array([1.1, 0.0, 0.0])


def _hold(ros, positions, seconds: float = 0.5):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(
        joint_names=["joint1", "joint2"],
        points=[JointTrajectoryPoint(positions=list(positions), time_from_start=Duration(nanosec=int(seconds * 1e9)))]))
    handle = ros.send_goal(FollowJointTrajectory, "joint_trajectory_controller/follow_joint_trajectory", goal)
    return ros.goal_result(handle, 30.0)


def _goal(x, y, theta, **fields):
    from discrete_robot_interfaces.action import PushObject
    from geometry_msgs.msg import Pose2D

    return PushObject.Goal(goal=Pose2D(x=float(x), y=float(y), theta=float(theta)), contact_friction=-1.0, **fields)


def test_the_arm_pushes_the_object_to_the_goal_and_bad_goals_are_refused(ros):
    from action_msgs.msg import GoalStatus
    from discrete_robot_interfaces.action import PushObject
    from geometry_msgs.msg import PoseStamped

    simulator = ros.start("discrete_robot_node", params={"initial_positions": READY, "time_step": 0.002,
                                                          "publish_rate": 100.0})
    node = ros.start("manipulation_node", params={"publish_rate": 50.0})
    assert _hold(ros, READY).result.error_code == 0
    first = ros.wait_for_message("manipulation/object_pose", PoseStamped, timeout=20.0)
    assert first.pose.position.x == pytest.approx(START[0])

    feedback = []
    target = START + (-0.04, 0.0, 0.0)
    handle = ros.send_goal(PushObject, "push_object", _goal(*target), feedback=feedback.append)
    response = ros.goal_result(handle, 120.0)
    result = response.result
    assert response.status == GoalStatus.STATUS_SUCCEEDED, result.message
    assert result.success and result.position_error <= 0.01 and abs(result.angle_error) <= np.radians(5)
    assert result.planned_vs_executed_position <= 0.01 and result.planned_vs_executed_angle <= np.radians(5)
    final = ros.wait_for_message("manipulation/object_pose", PoseStamped)
    assert abs(final.pose.position.x - target[0]) <= 0.01       # the object really is there
    assert any(f.push_index == 0 for f in feedback) and all(f.push_count >= 1 for f in feedback)

    for goal, reason in ((_goal(5.0, 0.0, 0.0), "outside the table"), (_goal(np.nan, 0.0, 0.0), "goal")):
        refused = ros.goal_result(ros.send_goal(PushObject, "push_object", goal), 60.0)
        assert refused.status == GoalStatus.STATUS_ABORTED and not refused.result.success
        assert reason in refused.result.message, refused.result.message
    assert simulator.alive() and node.alive()


def test_a_goal_waits_briefly_for_the_arms_first_joint_states(ros):
    """A goal can arrive before the arm's joint_states do (the action server is discovered first): it waits for
    them, a bounded time, rather than failing at once."""
    from action_msgs.msg import GoalStatus
    from discrete_robot_interfaces.action import PushObject
    from sensor_msgs.msg import JointState

    from discrete_robot.nodes.manipulation_node import STATE_WAIT_S

    node = ros.start("manipulation_node")
    publisher = ros.node.create_publisher(JointState, "joint_states", 10)
    alone = ros.goal_result(ros.send_goal(PushObject, "push_object", _goal(5.0, 0.0, 0.0)), 60.0)
    assert alone.status == GoalStatus.STATUS_ABORTED and "no joint_states" in alone.result.message

    handle = ros.send_goal(PushObject, "push_object", _goal(5.0, 0.0, 0.0))
    state = JointState(name=["joint1", "joint2"], position=READY)
    timer = ros.node.create_timer(STATE_WAIT_S / 20, lambda: publisher.publish(state))   # from now on
    refused = ros.goal_result(handle, 60.0)
    ros.node.destroy_timer(timer)
    # planned with the state that came during the wait: the goal is refused for itself, not for the missing state
    assert refused.status == GoalStatus.STATUS_ABORTED and "outside the table" in refused.result.message, \
        refused.result.message
    assert node.alive()
