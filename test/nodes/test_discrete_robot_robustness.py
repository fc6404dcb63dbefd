"""discrete_robot_node against the trajectory messages that killed it or dropped its rate (issue 13), over DDS:
ignored with a log line naming the problem, the arm stays where it was and the node's work per simulated second
(its CPU time, which a loaded machine does not stretch) stays what it was."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

HANGING = [-1.5707963267948966, 0.0]


def _cpu_per_simulated_second(ros, node) -> tuple[float, list]:
    """The node's CPU time per second of simulated time over the next 2 simulated seconds, and the states then
    received: a load-robust measure of its work (a busy machine stretches wall time, not CPU time)."""
    from sensor_msgs.msg import JointState

    def span(received):
        return ros.seconds(received[-1][1].header.stamp) - ros.seconds(received[0][1].header.stamp)

    used = ros.cpu_seconds(node)
    states = ros.collect_until("joint_states", JointState, lambda r: len(r) > 1 and span(r) >= 2.0, 120.0, qos=100)
    return (ros.cpu_seconds(node) - used) / span(states), states


def _point(positions, seconds):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectoryPoint

    return JointTrajectoryPoint(positions=list(positions), time_from_start=Duration(sec=int(seconds),
                                nanosec=int(round((seconds % 1) * 1e9))))


def test_huge_and_overlong_trajectories_are_ignored_and_the_rate_holds(ros):
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    node = ros.start("discrete_robot_node", params={"initial_positions": HANGING})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    before, _ = _cpu_per_simulated_second(ros, node)
    names = ["joint1", "joint2"]
    ros.publish("joint_trajectory", JointTrajectory(joint_names=names, points=[_point([1e308, 0.0], 1.0)]))
    ros.publish("joint_trajectory", JointTrajectory(
        joint_names=names, points=[_point([0.0, 0.0], 1.0 + 1e-3 * k) for k in range(100_000)]))
    # receiving a 100 000-point message costs rclpy about a second of deserialisation before any of the node's
    # code runs; what must not happen is a lasting drop (tracking a huge spline every tick, as it used to)
    ros.spin_until(lambda: "100000 points" in node.log(), 60.0)
    ros.spin_until(lambda: False, 0.5)
    cost, after = _cpu_per_simulated_second(ros, node)
    assert node.alive()
    assert cost < 1.5 * before, f"CPU time per simulated second went from {before:.3f} s to {cost:.3f} s"
    positions = np.array([m.position for _, m in after])
    np.testing.assert_allclose(positions, np.tile(HANGING, (len(positions), 1)), atol=1e-9)
    log = node.log()
    assert "must lie within" in log and "100000 points, more than" in log, log
