"""manipulation_node over DDS: an action client pushes the object to a goal with the simulated arm.

The planar 2-link arm (its scene: config/table_scene_planar_2link.yaml) at a 2 ms step, the object in the arm's
simulator (scene_file); its fingertip starts on the object's +x side, so the short case pushes the object 4 cm
towards -x. Without a simulator, a test publishes the arm's joint_states and the object's pose itself."""

import numpy as np
import pytest

from discrete_robot.ros.push_experiment import PUSH_GAINS  # the arm stiff enough for the object's load

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
                                                          "publish_rate": 100.0, "scene_file": "default", **PUSH_GAINS})
    node = ros.start("manipulation_node", params={"publish_rate": 50.0})
    assert _hold(ros, READY).result.error_code == 0
    first = ros.wait_for_message("objects/object/pose", PoseStamped, timeout=20.0)
    assert first.pose.position.x == pytest.approx(START[0])

    feedback = []
    target = START + (-0.04, 0.0, 0.0)
    handle = ros.send_goal(PushObject, "push_object", _goal(*target), feedback=feedback.append)
    response = ros.goal_result(handle, 120.0)
    result = response.result
    assert response.status == GoalStatus.STATUS_SUCCEEDED, result.message
    assert result.success and result.position_error <= 0.01 and abs(result.angle_error) <= np.radians(5)
    assert result.planned_vs_executed_position <= 0.01 and result.planned_vs_executed_angle <= np.radians(5)
    final = ros.wait_for_message("objects/object/pose", PoseStamped)
    assert abs(final.pose.position.x - target[0]) <= 0.01       # the object really is there (the simulator's)
    assert any(f.push_index == 0 for f in feedback) and all(f.push_count >= 1 for f in feedback)

    for goal, reason in ((_goal(5.0, 0.0, 0.0), "outside the table"), (_goal(np.nan, 0.0, 0.0), "goal")):
        refused = ros.goal_result(ros.send_goal(PushObject, "push_object", goal), 60.0)
        assert refused.status == GoalStatus.STATUS_ABORTED and not refused.result.success
        assert reason in refused.result.message, refused.result.message
    assert simulator.alive() and node.alive()


def _perceived(ros, positions, pose):
    """Publish the arm's joint_states and the object's pose (as a simulator would, one stamp) every 50 ms from
    now on; the timer, to destroy."""
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState

    from discrete_robot.nodes.conversions import pose_msg
    from discrete_robot.nodes.qos import JOINT_STATE_QOS

    states = ros.node.create_publisher(JointState, "joint_states", JOINT_STATE_QOS)
    poses = ros.node.create_publisher(PoseStamped, "objects/object/pose", JOINT_STATE_QOS)
    state = JointState(name=["joint1", "joint2"], position=list(positions))
    located = PoseStamped(pose=pose_msg((pose[0], pose[1], 0.0), (np.cos(pose[2] / 2), 0.0, 0.0,
                                                                   np.sin(pose[2] / 2))))
    state.header.stamp.sec = located.header.stamp.sec = 1
    return ros.node.create_timer(0.05, lambda: (states.publish(state), poses.publish(located)))


def test_a_goal_waits_briefly_for_the_arm_and_the_object(ros):
    """A goal can arrive before the arm's joint_states and the object's pose do (the action server is
    discovered first): it waits for them, a bounded time, rather than failing at once."""
    from action_msgs.msg import GoalStatus
    from discrete_robot_interfaces.action import PushObject

    node = ros.start("manipulation_node")
    alone = ros.goal_result(ros.send_goal(PushObject, "push_object", _goal(5.0, 0.0, 0.0)), 60.0)
    assert alone.status == GoalStatus.STATUS_ABORTED and "no joint_states" in alone.result.message

    handle = ros.send_goal(PushObject, "push_object", _goal(5.0, 0.0, 0.0))
    timer = _perceived(ros, READY, START)      # from now on
    refused = ros.goal_result(handle, 60.0)
    ros.node.destroy_timer(timer)
    # planned with the state that came during the wait: the goal is refused for itself, not for the missing state
    assert refused.status == GoalStatus.STATUS_ABORTED and "outside the table" in refused.result.message, \
        refused.result.message
    assert node.alive()


def test_goals_at_their_start_succeed_at_once_and_a_burst_of_them_is_answered_whole(ros):
    """issue 22: a goal equal to the start was aborted with "expected k >= 2 points"; now it succeeds at once and
    the arm is not asked to move. 3 clients x 10 such goals sent at once (keep-all on both ends; the server's
    goal, cancel and result services keep every request): all 30 answered. Without the simulator's control
    services a goal cannot place the object (use_start): refused, naming it."""
    from action_msgs.msg import GoalStatus
    from discrete_robot_interfaces.action import PushObject
    from geometry_msgs.msg import Pose2D
    from rclpy.action import ActionClient

    from discrete_robot.nodes.common import ACTION_QOS

    node = ros.start("manipulation_node")
    timer = _perceived(ros, READY, START)
    at_start = _goal(*START)
    first = ros.goal_result(ros.send_goal(PushObject, "push_object", at_start), 60.0)
    assert first.status == GoalStatus.STATUS_SUCCEEDED and "already at the goal" in first.result.message, \
        first.result.message
    assert first.result.success and first.result.position_error == 0.0
    placed = _goal(*START, use_start=True, start=Pose2D(x=START[0], y=START[1], theta=START[2]))
    refused = ros.goal_result(ros.send_goal(PushObject, "push_object", placed), 60.0)
    assert refused.status == GoalStatus.STATUS_ABORTED and "use_start" in refused.result.message

    clients = [ActionClient(ros.node, PushObject, "push_object", **ACTION_QOS) for _ in range(3)]
    assert all(c.wait_for_server(timeout_sec=30.0) for c in clients)
    sent = [client.send_goal_async(at_start) for client in clients for _ in range(10)]
    ros.spin_until(lambda: all(f.done() for f in sent), 60.0)
    assert all(f.done() and f.result().accepted for f in sent), f"{sum(f.done() for f in sent)} of 30 goals answered"
    results = [f.result().get_result_async() for f in sent]
    ros.spin_until(lambda: all(r.done() for r in results), 120.0)
    answered = [r.result() for r in results if r.done()]
    assert len(answered) == 30, f"{len(answered)} of 30 results"
    assert all(a.status == GoalStatus.STATUS_SUCCEEDED for a in answered)
    ros.node.destroy_timer(timer)
    assert node.alive()
