"""joint_trajectory_controller's messages from the core's values: results, feedback, controller state, points."""

import numpy as np
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from trajectory_msgs.msg import JointTrajectoryPoint

from discrete_robot.control.joint_trajectory_controller import ErrorCode, Update
from discrete_robot.control.trajectory import JointNamesError
from discrete_robot.errors import InputError
from discrete_robot.nodes.common import seconds_to_duration_fields


def goal_result(code: ErrorCode, message: str) -> FollowJointTrajectory.Result:
    return FollowJointTrajectory.Result(error_code=int(code), error_string=message)


def refusal_code(error: InputError) -> ErrorCode:
    """The result code of a trajectory the checks refused (validate_trajectory's error)."""
    if isinstance(error, JointNamesError):
        return ErrorCode.INVALID_JOINTS
    return ErrorCode.OLD_HEADER_TIMESTAMP if "header.stamp" in str(error) else ErrorCode.INVALID_GOAL


def trajectory_point(positions, velocities=None, accelerations=None, effort=None,
                     time_from_start: float = 0.0) -> JointTrajectoryPoint:
    """A JointTrajectoryPoint of the given arrays (None: the field stays empty), ``time_from_start`` s."""
    point = JointTrajectoryPoint(positions=positions.tolist())
    for name, values in (("velocities", velocities), ("accelerations", accelerations), ("effort", effort)):
        if values is not None:
            setattr(point, name, values.tolist())
    point.time_from_start.sec, point.time_from_start.nanosec = seconds_to_duration_fields(
        max(time_from_start, 0.0), "time_from_start")
    return point


def feedback_msg(stamp, joints, update: Update, q, qd, tau) -> FollowJointTrajectory.Feedback:
    """The action's feedback: desired, actual (with the efforts applied) and error at the update."""
    desired, t = update.desired, update.time_from_start
    feedback = FollowJointTrajectory.Feedback(joint_names=joints, index=update.index)
    feedback.header.stamp = stamp
    feedback.desired = trajectory_point(desired.q, desired.qd, desired.qdd, desired.effort, t)
    feedback.actual = trajectory_point(q, qd, effort=tau, time_from_start=t)
    feedback.error = trajectory_point(update.position_error, update.velocity_error, time_from_start=t)
    return feedback


def controller_state_msg(stamp, joints, update: Update, q, qd, tau) -> JointTrajectoryControllerState:
    """``controller_state`` at the update: reference, feedback, error and output (the efforts applied), with
    ``speed_scaling_factor`` 1.0 (no speed scaling here)."""
    desired, t = update.desired, update.time_from_start
    msg = JointTrajectoryControllerState(joint_names=joints, speed_scaling_factor=1.0)
    msg.header.stamp = stamp
    msg.reference = trajectory_point(desired.q, desired.qd, desired.qdd, time_from_start=t)
    msg.feedback = trajectory_point(q, qd, time_from_start=t)
    msg.error = trajectory_point(update.position_error, update.velocity_error, time_from_start=t)
    msg.output = trajectory_point(np.empty(0), effort=tau)
    return msg
