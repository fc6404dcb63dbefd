"""The start pose as a robot stack gives it: ``initial_positions`` one per joint or by joint name
(``initial_positions.<joint>``, as a YAML map ``initial_positions: {panda_joint4: -1.5}`` sets them, ros2_control's
mock hardware style), an SRDF ``<group_state>`` (``initial_pose_srdf``, ``initial_pose_name``), and a start outside
the position limits clamped with a warning that names the joint (discrete_robot.model.srdf)."""

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor

from discrete_robot.errors import InputError, ModelError
from discrete_robot.model.srdf import load_group_state, start_pose
from discrete_robot.nodes.common import ParameterSpec, StartupError
from discrete_robot.validation import finite_scalar, per_joint_values

START_POSE = [ParameterSpec("initial_pose_srdf", "", "an SRDF (a MoveIt config's) whose group_state "
                                                     "initial_pose_name sets the start of its joints; empty = none",
                            read_only=True),
              ParameterSpec("initial_pose_name", "", "the SRDF group_state to start in (e.g. ready)", read_only=True)]


def by_name(node, joints: list[str]) -> dict[str, float]:
    """The ``initial_positions.<joint>`` parameters that are set, rad or m (declared read-only, any number type)."""
    values = {}
    for joint in joints:
        name = f"initial_positions.{joint}"
        value = node.declare_parameter(name, None, ParameterDescriptor(
            description=f"initial position of {joint}, rad or m (a map entry of initial_positions)",
            dynamic_typing=True, read_only=True)).value
        if value is not None:
            try:
                values[joint] = finite_scalar(value, name)
            except InputError as error:
                raise StartupError(str(error)) from None
    return values


def start_positions(node, model, values: dict) -> np.ndarray:
    """The start: ``initial_positions`` (one per joint; empty = the model's, the zero pose for a URDF), the SRDF
    group_state's joints over it, the ``initial_positions.<joint>`` entries over those; clamped into the limits,
    each clamp a warning."""
    joints = list(model.joint_names)
    # the URDF reader starts at zero clamped into the limits; the clamp is reported here
    default = np.zeros(model.dof) if model.urdf is not None else model.initial_positions
    srdf, pose = values["initial_pose_srdf"], values["initial_pose_name"]
    if bool(srdf) != bool(pose):
        raise StartupError("initial_pose_srdf and initial_pose_name: give both or neither")
    try:
        base = per_joint_values(values["initial_positions"], default, "initial_positions", joints)
        named = load_group_state(srdf, pose).values if srdf else {}
        start = start_pose(joints, model.lower, model.upper, base, {**named, **by_name(node, joints)})
    except (InputError, ModelError) as error:
        raise StartupError(str(error)) from None
    for warning in start.warnings:
        node.get_logger().warning(warning)
    return start.positions
