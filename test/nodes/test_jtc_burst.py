"""No FollowJointTrajectory request is lost: the action's goal, cancel and result services keep every request
(KEEP_ALL), so a burst from several clients is answered in full and every accepted goal ends with a result.
Counts only; the time a burst takes depends on the machine's load and is not asserted."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

ACTION = "joint_trajectory_controller/follow_joint_trajectory"


def _goal(target: float):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=["joint1", "joint2"], points=[
        JointTrajectoryPoint(positions=[target, 0.0], time_from_start=Duration(sec=1))])
    return goal


def _clients(ros, count: int):
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient

    from discrete_robot.nodes.common import SERVICE_QOS

    # keep-all on the client's side too: a client keeping only the last 10 responses would drop answers itself
    clients = [ActionClient(ros.node, FollowJointTrajectory, ACTION, goal_service_qos_profile=SERVICE_QOS,
                            result_service_qos_profile=SERVICE_QOS, cancel_service_qos_profile=SERVICE_QOS)
               for _ in range(count)]
    for client in clients:
        assert client.wait_for_server(timeout_sec=30.0)
    ros.spin_until(lambda: False, 0.5)              # discovery of every client's endpoints settles
    return clients


def _results(ros, sent, timeout: float):
    """Every goal answered; the accepted ones' results (each must end)."""
    assert ros.spin_until(lambda: all(f.done() for f in sent), timeout), \
        f"{sum(f.done() for f in sent)} of {len(sent)} goals answered"
    accepted = [f.result() for f in sent if f.result().accepted]
    results = [handle.get_result_async() for handle in accepted]
    assert ros.spin_until(lambda: all(r.done() for r in results), timeout), \
        f"{sum(r.done() for r in results)} of {len(results)} accepted goals ended with a result"
    return [r.result() for r in results]


def test_three_clients_bursting_ten_goals_each_are_all_answered_and_all_end(ros):
    from action_msgs.msg import GoalStatus
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node")
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    clients = _clients(ros, 3)
    sent = [client.send_goal_async(_goal(0.01 * k)) for k in range(10) for client in clients]
    results = _results(ros, sent, 120.0)
    assert len(sent) == 30 and len(results) == 30, "every valid goal is accepted"
    statuses = [r.status for r in results]
    # each goal preempts the one before (aborted, INVALID_GOAL); the last one accepted runs to its end
    assert statuses.count(GoalStatus.STATUS_ABORTED) == 29 and statuses.count(GoalStatus.STATUS_SUCCEEDED) == 1
    assert node.alive()


def test_a_hundred_goals_a_second_for_five_seconds_are_all_answered_and_all_end(ros):
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node")
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    client, = _clients(ros, 1)
    sent = []
    for k in range(500):
        sent.append(client.send_goal_async(_goal(0.2 * np.sin(0.1 * k))))
        ros.spin_until(lambda: False, 0.01, step=0.01)
    results = _results(ros, sent, 300.0)
    assert len(results) == 500
    assert all(r.result.error_string for r in results), "every result says how the goal ended"
    assert node.alive()
