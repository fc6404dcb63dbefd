"""Message conversions the nodes share: joint states, quaternions, poses and transforms, durations and times."""

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion, TransformStamped
from sensor_msgs.msg import JointState

from discrete_robot.errors import InputError
from discrete_robot.geometry3d import matrix_to_quaternion
from discrete_robot.model.urdf import WORLD_FRAME, FrameTransform
from discrete_robot.validation import finite_scalar, finite_vector


def joint_state_msg(stamp: Time, names: Sequence[str], position, velocity=(), effort=()) -> JointState:
    """A JointState with the given arrays (rad, rad/s, N m; or m, m/s, N for prismatic joints)."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(v) for v in position]
    msg.velocity = [float(v) for v in velocity]
    msg.effort = [float(v) for v in effort]
    return msg


def quaternion_msg(wxyz) -> Quaternion:
    """A geometry_msgs Quaternion from [w, x, y, z] (transforms3d order), normalised."""
    w, x, y, z = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
    return Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))


def pose_msg(position, wxyz) -> Pose:
    """A Pose from a position (m) and a [w, x, y, z] quaternion."""
    x, y, z = (float(v) for v in position)
    return Pose(position=Point(x=x, y=y, z=z), orientation=quaternion_msg(wxyz))


def duration_seconds(duration) -> float:
    """builtin_interfaces Duration -> seconds."""
    return duration.sec + duration.nanosec * 1e-9


#: builtin_interfaces Duration/Time hold seconds in an int32
_MAX_MESSAGE_SECONDS = 2.0 ** 31 - 1.0


def seconds_to_duration_fields(seconds: float, what: str = "duration") -> tuple[int, int]:
    """Seconds -> (sec, nanosec) for builtin_interfaces Duration/Time; InputError naming ``what`` when the value
    is not finite or outside [0, 2³¹ − 1] s (the message's int32 seconds)."""
    seconds = finite_scalar(seconds, what, low=0.0, high=_MAX_MESSAGE_SECONDS)
    nanoseconds = int(round(seconds * 1e9))
    return nanoseconds // 1_000_000_000, nanoseconds % 1_000_000_000


def stamp_ns(stamp) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (exact, and ordered as the times are)."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def time_msg(seconds: float) -> Time:
    """Simulated seconds -> builtin_interfaces/Time (nanosecond resolution)."""
    sec, nanosec = seconds_to_duration_fields(seconds, "simulated time")
    return Time(sec=sec, nanosec=nanosec)


def merged_joint_state(joints: Sequence[str], state, positions: np.ndarray, velocities: np.ndarray):
    """``positions`` and ``velocities`` (the joints' current values, ``joints`` order) with the entries a
    sensor_msgs/JointState names replaced by its finite values (an empty field keeps them); InputError naming
    the field for unknown or repeated names, wrong lengths or non-finite values."""
    joints, names = list(joints), list(state.name)
    unknown = [name for name in names if name not in joints]
    if unknown or len(set(names)) != len(names):
        raise InputError(f"joint_state.name: unknown or repeated joint name(s) in {names}; the joints are {joints}")
    index = [joints.index(name) for name in names]
    positions, velocities = positions.copy(), velocities.copy()
    for field, target in (("position", positions), ("velocity", velocities)):
        values = getattr(state, field)
        if len(values):
            target[index] = finite_vector(values, len(names), f"joint_state.{field}")
    return positions, velocities


def transform_msg(stamp: Time, transform: FrameTransform, prefix: str) -> TransformStamped:
    """A TransformStamped of ``transform`` with its frames prefixed (except ``world``)."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = transform.parent if transform.parent == WORLD_FRAME else prefix + transform.parent
    msg.child_frame_id = prefix + transform.child
    x, y, z = (float(v) for v in transform.translation)
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = x, y, z
    msg.transform.rotation = quaternion_msg(matrix_to_quaternion(np.ascontiguousarray(transform.rotation,
                                                                                   dtype=float)))
    return msg
