"""The controllers of a ros2_controllers.yaml on discrete_robot_node, created as controller_manager creates them.

Every controller listed with a ``type`` under ``controller_manager: ros__parameters:`` of ``controllers_file`` is
read by discrete_robot.control.configuration (its joints, its parameters; an unknown type, or two controllers
claiming one command interface, stop the node with one line as controller_manager refuses them) and created from
its type:

- ``joint_trajectory_controller/JointTrajectoryController``: the JTC contract (discrete_robot.nodes.
  trajectory_controller), one per entry, its parameters under ``<name>.`` (``controller_name``'s unprefixed);
- ``forward_command_controller/ForwardCommandController`` (``interface_name`` effort or position) and
  ``effort_controllers/JointGroupEffortController``: ``<name>/commands`` (std_msgs/Float64MultiArray, one value
  per joint, the section's order); efforts applied as they are, positions tracked by the node's law;
- the gripper action controllers: ``<name>/gripper_cmd`` (discrete_robot.nodes.gripper_controller);
- ``joint_state_broadcaster/JointStateBroadcaster``: the node's ``joint_states``.

Without a ``controller_manager`` section the node has its one JTC, ``controller_name``: on the ``joints``
parameter, else the file's section, else the URDF's ``<ros2_control>`` joints, else the joints that are not
fingers, and a gripper controller on those (configuration.default_controllers).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from std_msgs.msg import Float64MultiArray

from discrete_robot.config_files import load_yaml
from discrete_robot.control.configuration import FORWARD, GROUP_EFFORT, ControllerSpec, read_controllers
from discrete_robot.control.trajectory import Reference
from discrete_robot.errors import InputError
from discrete_robot.nodes.common import STATE_QOS
from discrete_robot.validation import finite_vector


def listed_controllers(path: str, joint_names: Sequence[str]) -> list[ControllerSpec]:
    """The controllers ``controller_manager: ros__parameters:`` of the ros2_controllers.yaml at ``path`` lists
    (configuration.read_controllers), [] when it has no such section."""
    document = load_yaml(path, "controllers_file")
    if not isinstance(document, dict) or "controller_manager" not in document:
        return []
    return read_controllers(path, joint_names)


@dataclass
class ForwardCommand:
    """A forward command controller: the last command on ``<name>/commands`` for its joints (model indices
    ``indices``), None until the first."""
    name: str
    indices: np.ndarray
    interface: str
    command: np.ndarray | None = None
    enabled: bool = True

    def reference(self) -> Reference | None:
        """A position command as a reference at rest (None for efforts, or before the first command)."""
        if self.interface != "position" or self.command is None:
            return None
        zeros = np.zeros(len(self.indices))
        return Reference(self.command.copy(), zeros, zeros.copy())


def forward_command(node, spec: ControllerSpec, dof_names: Sequence[str]) -> ForwardCommand:
    """A forward command controller of ``spec`` on ``node``: its ``<name>/commands`` subscription."""
    joints, name = list(spec.joints), spec.name
    interface = "effort" if spec.type == GROUP_EFFORT else spec.parameters["interface_name"]
    controller = ForwardCommand(name, np.array([list(dof_names).index(j) for j in joints]), interface)

    def on_command(msg: Float64MultiArray) -> None:
        try:
            controller.command = finite_vector(msg.data, len(joints), f"{name}/commands")
        except InputError as error:
            node.refusals.warning(str(error), f"ignored: {error} (joints: {', '.join(joints)})")

    node.create_subscription(Float64MultiArray, f"{name}/commands", on_command, STATE_QOS)
    return controller


FORWARD_TYPES = (FORWARD, GROUP_EFFORT)


def combined_reference(parts: Sequence[tuple[np.ndarray, Reference]]) -> Reference:
    """One reference from the controllers' (their joints' positions in the combined order, reference) parts. The
    trajectories' efforts are kept only when every part carries them; otherwise the law uses the inverse dynamics
    of the combined reference for all."""
    size = sum(len(positions) for positions, _ in parts)
    q, qd, qdd = np.zeros(size), np.zeros(size), np.zeros(size)
    effort = np.zeros(size) if all(reference.effort is not None for _, reference in parts) else None
    for positions, reference in parts:
        q[positions], qd[positions], qdd[positions] = reference.q, reference.qd, reference.qdd
        if effort is not None:
            effort[positions] = reference.effort
    return Reference(q, qd, qdd, effort, parts[0][1].index if len(parts) == 1 else None)


def startup_line(name: str, kind: str, joints: Sequence[str]) -> str:
    """The start-up log's line for a controller: its name, type and joints."""
    return f"controller {name} ({kind}): joints {', '.join(joints) or '-'}"
