"""manipulation_node's messages: the finger motion as the arm's goal, push_object's result."""

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Pose2D
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.manipulation.push_to_pose import PushMotion, path_difference, pose_error
from discrete_robot.nodes.conversions import seconds_to_duration_fields


def pose2d(pose) -> Pose2D:
    return Pose2D(x=float(pose[0]), y=float(pose[1]), theta=float(pose[2]))


def finger_motion_goal(joint_names, motion: PushMotion, start_ns: int | None = None) -> FollowJointTrajectory.Goal:
    """The finger motion's joint trajectory (positions and velocities at its times) as the arm's goal, starting at
    simulated time ``start_ns`` (ns; None: when the controller takes it, JTC's zero stamp)."""
    trajectory = JointTrajectory(joint_names=list(joint_names))
    if start_ns is not None:
        trajectory.header.stamp.sec, trajectory.header.stamp.nanosec = divmod(int(start_ns), 1_000_000_000)
    for t, q, qd in zip(motion.trajectory.t, motion.trajectory.q, motion.trajectory.qd, strict=True):
        sec, nanosec = seconds_to_duration_fields(float(t), "finger motion time")
        trajectory.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                                      time_from_start=Duration(sec=sec, nanosec=nanosec)))
    return FollowJointTrajectory.Goal(trajectory=trajectory)


def report(result, final, goal_pose, motion: PushMotion | None, executed: list[np.ndarray], success: bool) -> None:
    """push_object's ``result`` from the object's ``final`` pose against ``goal_pose`` (x, y, θ), the plan of
    ``motion`` and the ``executed`` poses; ``motion`` None: nothing was to be done; ``success``: within the goal's
    tolerances."""
    position, angle = pose_error(final, goal_pose)
    planned = motion.planned_poses if motion is not None else final[None]
    result.final_pose = pose2d(final)
    result.planned_poses = [pose2d(p) for p in planned]
    result.position_error, result.angle_error = position, angle
    executed = np.array(executed) if executed else final[None]
    result.planned_vs_executed_position, result.planned_vs_executed_angle = path_difference(planned, executed)
    result.success = success
    if motion is None:
        result.message = (f"already at the goal: {position:.4f} m, {np.degrees(angle):.2f} deg off (within "
                          "position_tolerance and angle_tolerance); the arm did not move")
        return
    result.message = (f"{'reached' if result.success else 'missed'} the goal: {position:.4f} m, "
                      f"{np.degrees(angle):.2f} deg off after {len(motion.plan.pushes)} push(es); executed path "
                      f"within {result.planned_vs_executed_position:.4f} m, "
                      f"{np.degrees(result.planned_vs_executed_angle):.2f} deg of the plan")


def arm_failure(arm_result, action: str, timeout_s: float) -> str | None:
    """Why the arm's goal failed (its FollowJointTrajectory result; None: no progress within ``timeout_s`` and
    canceled), or None when it succeeded."""
    if arm_result is None:
        return f"no progress from {action} in execution_timeout = {timeout_s:g} s; goal canceled"
    if arm_result.result.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
        return f"the arm failed ({arm_result.result.error_code}): {arm_result.result.error_string}"
    return None


def within(error: tuple[float, float], position_tolerance: float, angle_tolerance: float) -> bool:
    """Whether a pose error (m, rad) is within the tolerances (m, rad)."""
    return error[0] <= position_tolerance and abs(error[1]) <= angle_tolerance
