"""The start pose as a robot stack gives it: ``initial_positions`` one per joint or by joint name
(``initial_positions.<joint>``, as a YAML map ``initial_positions: {panda_joint4: -1.5}`` sets them, ros2_control's
mock hardware style), and a start outside the position limits clamped with a warning that names the joint."""

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor

from discrete_robot.errors import InputError
from discrete_robot.nodes.common import StartupError
from discrete_robot.validation import finite_scalar, per_joint_values


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


def start_positions(node, model, positions: list[float]) -> np.ndarray:
    """The start: ``positions`` (one per joint; empty = the model's initial positions, the zero pose for a URDF)
    with the ``initial_positions.<joint>`` entries over them, each clamped into its limits with a warning."""
    joints = list(model.joint_names)
    # the URDF reader starts at zero clamped into the limits; the clamp is reported here
    default = np.zeros(model.dof) if model.urdf is not None else model.initial_positions
    try:
        q = np.array(per_joint_values(positions, default, "initial_positions", joints), dtype=float)
    except InputError as error:
        raise StartupError(str(error)) from None
    for joint, value in by_name(node, joints).items():
        q[joints.index(joint)] = value
    clamped = np.clip(q, model.lower, model.upper)
    for i in np.flatnonzero(clamped != q):
        node.get_logger().warning(f"initial_positions: {joints[i]} = {q[i]:g} is outside its limits "
                                  f"[{model.lower[i]:g}, {model.upper[i]:g}]; it starts at {clamped[i]:g}")
    return clamped
