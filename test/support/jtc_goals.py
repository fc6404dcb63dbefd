"""Client side of joint_trajectory_controller: FollowJointTrajectory goals as MoveIt's simple controller manager
sends them (header stamp 0: start on receipt; tolerances empty: the controller's defaults)."""

from collections.abc import Sequence


def follow_joint_trajectory_goal(names: Sequence[str], points, goal_time: float = 0.0):
    """A FollowJointTrajectory goal from ``points``: (t s, positions[, velocities[, accelerations]]) in ``names``
    order; ``goal_time``: the goal_time_tolerance, s (0: the controller's default)."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from discrete_robot.nodes.common import seconds_to_duration_fields

    def duration(seconds: float) -> Duration:
        sec, nanosec = seconds_to_duration_fields(seconds)
        return Duration(sec=sec, nanosec=nanosec)

    goal = FollowJointTrajectory.Goal(goal_time_tolerance=duration(goal_time))
    goal.trajectory = JointTrajectory(joint_names=list(names))
    for t, *fields in points:
        point = JointTrajectoryPoint(time_from_start=duration(t))
        for name, values in zip(("positions", "velocities", "accelerations"), fields, strict=False):
            setattr(point, name, [float(v) for v in values])
        goal.trajectory.points.append(point)
    return goal


def rest_to_rest_points(start, target, duration: float, count: int = 4) -> list:
    """``count`` points of the quintic blend q(s) = start + (10 s³ − 15 s⁴ + 6 s⁵)(target − start), s = t / duration,
    with its velocities and accelerations (at rest at both ends), as a time-parameterised plan gives them."""
    import numpy as np

    start, delta = np.asarray(start, dtype=float), np.asarray(target, dtype=float) - np.asarray(start, dtype=float)
    points = []
    for s in np.linspace(0.0, 1.0, count + 1)[1:]:
        points.append((s * duration, start + (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5) * delta,
                       (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration * delta,
                       (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2 * delta))
    return points
