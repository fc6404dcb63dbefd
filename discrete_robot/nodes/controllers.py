"""The controllers of a ros2_controllers.yaml on discrete_robot_node, created as controller_manager creates them.

Every controller listed with a ``type`` under ``controller_manager: ros__parameters:`` of ``controllers_file`` is
created from its type, on the joints its own ``<name>: ros__parameters:`` section lists:

- ``joint_trajectory_controller/JointTrajectoryController``: the JTC contract (discrete_robot.nodes.
  trajectory_controller), one per entry, its parameters under ``<name>.`` (``controller_name``'s unprefixed);
- ``forward_command_controller/ForwardCommandController`` (``interface_name`` effort or position) and
  ``effort_controllers/JointGroupEffortController``: ``<name>/commands`` (std_msgs/Float64MultiArray, one value
  per joint, the section's order); efforts applied as they are, positions tracked by the node's law;
- ``joint_state_broadcaster/JointStateBroadcaster``: the node's ``joint_states``.

A type not listed here is refused at start with one line naming the controller and its type; the node serves
the others. Without a ``controller_manager`` section the node has its one JTC, ``controller_name``.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from std_msgs.msg import Float64MultiArray

from discrete_robot.control.trajectory import Reference
from discrete_robot.errors import InputError
from discrete_robot.nodes.common import STATE_QOS, StartupError
from discrete_robot.nodes.jtc_parameters import controllers_file_values
from discrete_robot.validation import finite_vector

JTC = "joint_trajectory_controller/JointTrajectoryController"
BROADCASTER = "joint_state_broadcaster/JointStateBroadcaster"
#: forward command controllers: type -> the command interface when the type fixes it
FORWARD = {"forward_command_controller/ForwardCommandController": None,
           "effort_controllers/JointGroupEffortController": "effort"}


def listed_controllers(path: str) -> dict[str, str]:
    """name -> type of every controller under ``controller_manager: ros__parameters:`` of the ros2_controllers.yaml
    at ``path`` ({} when it has no such section); StartupError when the file cannot be read."""
    try:
        document = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise StartupError(f"controllers_file: cannot read {path}: {error}") from None
    manager = document.get("controller_manager") if isinstance(document, dict) else None
    parameters = (manager or {}).get("ros__parameters") if isinstance(manager, dict) else None
    if not isinstance(parameters, dict):
        return {}
    return {name: str(entry["type"]) for name, entry in parameters.items()
            if isinstance(entry, dict) and "type" in entry}


@dataclass
class ForwardCommand:
    """A forward command controller: the last command on ``<name>/commands`` for its joints (model indices
    ``indices``), None until the first."""
    name: str
    indices: np.ndarray
    interface: str
    command: np.ndarray | None = None

    def reference(self) -> Reference | None:
        """A position command as a reference at rest (None for efforts, or before the first command)."""
        if self.interface != "position" or self.command is None:
            return None
        zeros = np.zeros(len(self.indices))
        return Reference(self.command.copy(), zeros, zeros.copy())


def forward_command(node, name: str, kind: str, joints: Sequence[str], dof_names: Sequence[str],
                    controllers_file: str) -> ForwardCommand:
    """A forward command controller of type ``kind`` on ``node``: its ``<name>/commands`` subscription; its joints
    and ``interface_name`` from the file's ``<name>`` section (StartupError when they are missing or unknown)."""
    values = controllers_file_values(controllers_file, name)
    interface = FORWARD[kind] or values.get("interface_name")
    if interface not in ("effort", "position"):
        raise StartupError(f"{name}: interface_name {interface!r}: this simulator takes effort or position")
    listed = list(values.get("joints") or joints)
    unknown = [joint for joint in listed if joint not in dof_names]
    if not listed or unknown:
        raise StartupError(f"{name}: joints {listed} must be joints of the robot {list(dof_names)}")
    controller = ForwardCommand(name, np.array([list(dof_names).index(j) for j in listed]), interface)

    def on_command(msg: Float64MultiArray) -> None:
        try:
            controller.command = finite_vector(msg.data, len(listed), f"{name}/commands")
        except InputError as error:
            node.refusals.warning(str(error), f"ignored: {error} (joints: {', '.join(listed)})")

    node.create_subscription(Float64MultiArray, f"{name}/commands", on_command, STATE_QOS)
    return controller


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
