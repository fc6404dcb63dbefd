"""manipulation_node's messages: the object's pose, the finger motion as the arm's goal, push_object's result."""

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Point, PointStamped, Pose2D, PoseStamped, TransformStamped, Vector3
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.geometry2d import yaw_quaternion
from discrete_robot.manipulation.push_to_pose import PushMotion, path_difference, pose_error
from discrete_robot.model.urdf import WORLD_FRAME
from discrete_robot.nodes.conversions import quaternion_msg, seconds_to_duration_fields

OBJECT_FRAME = "object"


def pose2d(pose) -> Pose2D:
    return Pose2D(x=float(pose[0]), y=float(pose[1]), theta=float(pose[2]))


def object_messages(pose, finger, finger_height: float, table_height: float,
                    stamp) -> tuple[PoseStamped, PointStamped, TFMessage]:
    """The object's planar ``pose`` (x, y, θ) on the table as a PoseStamped and as the TF frame ``object``, and the
    fingertip centre (``finger`` x, y at ``finger_height``), in ``world``, stamped ``stamp``."""
    x, y, theta = (float(v) for v in pose)
    rotation = quaternion_msg(yaw_quaternion(theta))
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = stamp, WORLD_FRAME
    msg.pose.position = Point(x=x, y=y, z=table_height)
    msg.pose.orientation = rotation
    tip = PointStamped(point=Point(x=float(finger[0]), y=float(finger[1]), z=float(finger_height)))
    tip.header = msg.header
    transform = TransformStamped(child_frame_id=OBJECT_FRAME)
    transform.header = msg.header
    transform.transform.translation = Vector3(x=x, y=y, z=table_height)
    transform.transform.rotation = rotation
    return msg, tip, TFMessage(transforms=[transform])


def finger_motion_goal(joint_names, motion: PushMotion) -> FollowJointTrajectory.Goal:
    """The finger motion's joint trajectory (positions and velocities at its times) as the arm's goal."""
    trajectory = JointTrajectory(joint_names=list(joint_names))
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
