"""discrete_robot_node's controllers together: created from the controllers file, their references combined.

The trajectory controllers and the position-commanding forward controllers give references for their joints
(model indices :attr:`ControllerSet.controlled`, in that order), which the node's computed-torque law tracks
(discrete_robot.control.computed_torque.TrajectoryTracking; the other joints held where they were when the
controllers took over). While any of them drives, the others hold where they are, as an active controller holds
its joints without a goal. Effort-commanding forward controllers then replace their joints' torques with their
last command. The controllers' types and files: discrete_robot.nodes.controllers.
"""

from collections.abc import Callable

import numpy as np

from discrete_robot.control.computed_torque import saturate
from discrete_robot.control.configuration import (
    BROADCASTER,
    GRIPPER,
    JTC,
    PARALLEL_GRIPPER,
    ControllerSpec,
    default_controllers,
    finger_joints,
)
from discrete_robot.control.joint_trajectory_controller import continuous_joints, controller_joints
from discrete_robot.control.trajectory import Reference
from discrete_robot.nodes.controller_manager import ControllerManager
from discrete_robot.nodes.controllers import (
    FORWARD_TYPES,
    ForwardCommand,
    combined_reference,
    forward_command,
    listed_controllers,
    startup_line,
)
from discrete_robot.nodes.gripper_controller import GripperEndpoints
from discrete_robot.nodes.joint_commands import JointCommands
from discrete_robot.nodes.jtc_parameters import controllers_file_joints, declare_controller_parameters
from discrete_robot.nodes.trajectory_controller import TrajectoryControllerEndpoints


class ControllerSet:
    """The controllers of ``values["controllers_file"]`` (else the one JTC ``values["controller_name"]``) on
    ``node`` for ``model``; ``state()`` gives (simulated time s, every joint's positions, velocities)."""

    def __init__(self, node, model, values: dict, state: Callable[[], tuple[float, np.ndarray, np.ndarray]]):
        self.node, self.state = node, state
        self.dofs, self.file = list(model.joint_names), values["controllers_file"]
        self.effort_limits = model.effort_limits
        self.trajectory: list[tuple[TrajectoryControllerEndpoints, np.ndarray]] = []
        self.forward: list[ForwardCommand] = []
        self.grippers: list[GripperEndpoints] = []
        self.lines: list[str] = []
        self.specs: list[ControllerSpec] = []
        self.members: dict[str, tuple[object, np.ndarray]] = {}     # by name: the endpoints and their joints
        self.holding = False        # the joints no controller drives hold where they are (hold_on_start)
        for spec in (listed_controllers(self.file, self.dofs) if self.file else []) or self._default(model, values):
            primary = spec.name == values["controller_name"]
            self.specs.append(spec)
            if spec.type == BROADCASTER:
                self.lines.append(startup_line(spec.name, spec.type, ["joint_states"]))
                continue
            self.lines.append(startup_line(spec.name, spec.type, spec.joints))
            if spec.type in (GRIPPER, PARALLEL_GRIPPER):
                index = self.dofs.index(spec.joints[0])
                self.grippers.append(GripperEndpoints(node, spec, self.dofs, model.effort_limits[index], state))
                self.members[spec.name] = (self.grippers[-1], self.grippers[-1].indices)
                continue
            if spec.type in FORWARD_TYPES:
                self.forward.append(forward_command(node, spec, self.dofs))
                self.members[spec.name] = (self.forward[-1], self.forward[-1].indices)
                continue
            joints, name, prefix = list(spec.joints), spec.name, "" if primary else f"{spec.name}."
            indices = np.array([self.dofs.index(joint) for joint in joints])
            self.trajectory.append((TrajectoryControllerEndpoints(
                node, name, joints, declare_controller_parameters(node, name, joints, self.file, prefix, gains=True),
                self._joint_state(indices), topic_aliases=("joint_trajectory",) if primary else (), prefix=prefix,
                wraparound=continuous_joints(model, joints), velocity_limits=model.velocity_limits[indices],
                update_period=1.0 / values["publish_rate"]), indices))
            self.members[spec.name] = self.trajectory[-1]
        self.joint_commands = JointCommands(node, values["joint_commands_topic"], self.dofs, self.claimed_joints)
        self.manager = ControllerManager(node, self)

    def _default(self, model, values: dict) -> list[ControllerSpec]:
        """Without a controllers file's list: the JTC ``controller_name`` on the ``joints`` parameter, else the
        file's section, else the URDF's ``<ros2_control>`` joints; else on the joints that are not fingers, and a
        gripper controller on the fingers (configuration.default_controllers)."""
        name = values["controller_name"]
        requested = values["joints"] or controllers_file_joints(self.file, name)
        if requested or model.command_interfaces:
            joints = controller_joints(self.dofs, model.command_interfaces, requested)
            return [ControllerSpec(name, JTC, tuple(joints), {"joints": list(joints)})]
        return default_controllers(self.dofs, finger_joints(model), name)

    @property
    def claimed(self) -> np.ndarray:
        """The model indices of the joints the active trajectory and forward position controllers drive."""
        positions = [c.indices for c in self.forward if c.interface == "position" and c.enabled]
        return np.concatenate([np.zeros(0, dtype=int)] + [indices for e, indices in self.trajectory if e.enabled]
                              + positions).astype(int)

    def claimed_joints(self) -> set[str]:
        """The joints the active controllers claim (the others follow ``joint_commands``)."""
        return {self.dofs[i] for i in self.claimed} | {self.dofs[i] for c in [*self.forward, *self.grippers]
                                                        if c.enabled for i in c.indices}

    def set_active(self, name: str, active: bool, reason: str) -> None:
        """Activate controller ``name`` (its joints held where they are, their joint_commands forgotten) or
        deactivate it (its running goal ends with ``reason``; its joints held where they are until joint_commands
        moves them); the broadcaster has nothing to switch."""
        if name not in self.members:
            return
        member, indices = self.members[name]
        if isinstance(member, TrajectoryControllerEndpoints):
            member.enabled = active
            member.hold() if active else member.release(reason)
        elif isinstance(member, GripperEndpoints):
            member.set_active(active)
        else:
            member.enabled, member.command = active, None
        held = self.node.tracking.held
        if held is not None:
            held[indices] = self.state()[1][indices]
        if active:
            self.joint_commands.drop(self.claimed_joints())

    @property
    def controlled(self) -> np.ndarray:
        """The model indices of the joints given a reference: the controllers' (trajectory, then forward
        position), then those joint_commands gives a position or velocity."""
        return np.concatenate([self.claimed, self.joint_commands.tracked])

    def _joint_state(self, indices: np.ndarray) -> Callable[[], tuple[float, np.ndarray, np.ndarray]]:
        def state():
            t, q, qd = self.state()
            return t, q[indices], qd[indices]
        return state

    @property
    def actions(self) -> list[str]:
        return [endpoints.action for endpoints, _ in self.trajectory]

    @property
    def active(self) -> bool:
        """Whether a controller drives its joints (a trajectory, a hold, a position command)."""
        return (any(endpoints.active for endpoints, _ in self.trajectory)
                or any(c.reference() is not None for c in self.forward) or self.joint_commands.tracked.size > 0
                or self.holding)

    def hold(self) -> None:
        """Every trajectory controller holds its joints where they are, and so do the joints no controller
        claims until joint_commands moves them."""
        self.holding = True
        for endpoints, _ in self.trajectory:
            endpoints.hold()

    def take_over(self) -> None:
        """A controller drives: the trajectory controllers without a goal hold where their joints are."""
        for endpoints, _ in self.trajectory:
            if not endpoints.active:
                endpoints.hold()

    def release(self, reason: str) -> None:
        """Every controller stops driving (the running goals end with ``reason``); position commands are cleared
        and nothing holds."""
        self.holding = False
        for endpoints, _ in self.trajectory:
            endpoints.release(reason)
        for controller in self.forward:
            controller.command = None

    def reference(self, t: float, held: np.ndarray) -> Reference:
        """The desired state of the :attr:`controlled` joints at t; a forward position controller without a
        command yet holds its joints at ``held`` (every joint's positions)."""
        parts, offset = [], 0
        for endpoints, indices in self.trajectory:
            if not endpoints.enabled:
                continue
            parts.append((np.arange(offset, offset + len(indices)), endpoints.sample(t)))
            offset += len(indices)
        for controller in self.forward:
            if controller.interface == "position" and controller.enabled:
                rest = np.zeros(len(controller.indices))
                parts.append((np.arange(offset, offset + len(controller.indices)),
                              controller.reference() or Reference(held[controller.indices], rest, rest.copy())))
                offset += len(controller.indices)
        tracked = self.joint_commands.tracked
        if tracked.size:
            parts.append((np.arange(offset, offset + tracked.size), self.joint_commands.reference(self.state()[1])))
        if not parts:        # no controller: every joint holds
            return Reference(np.zeros(0), np.zeros(0), np.zeros(0))
        return parts[0][1] if len(parts) == 1 else combined_reference(parts)

    def gains(self, kp: float, kd: float) -> tuple[np.ndarray, np.ndarray]:
        """kp (1/s²) and kd (1/s) per joint: each trajectory controller's gains.<joint>.p and .d where set, else
        ``kp`` and ``kd``."""
        p, d = np.full(len(self.dofs), kp), np.full(len(self.dofs), kd)
        for endpoints, indices in self.trajectory:
            p[indices], d[indices] = endpoints.gains(kp, kd)
        return p, d

    def commanded_efforts(self, tau: np.ndarray, t: float, q: np.ndarray | None, v: np.ndarray | None) -> np.ndarray:
        """``tau`` with the effort-commanding forward controllers' joints and joint_commands' effort-commanded
        joints set to their last commands, and the grippers' fingers to their efforts at t (q, v: the state, None
        for the current one), saturated at the effort limits."""
        if self.grippers and q is None:
            _, q, v = self.state()
        for gripper in self.grippers:
            if gripper.enabled:
                tau[gripper.indices] = gripper.effort(t, q, v)
        for controller in self.forward:
            if controller.interface == "effort" and controller.enabled and controller.command is not None:
                tau[controller.indices] = controller.command
        return saturate(self.joint_commands.efforts(tau), self.effort_limits)

    def tick(self, stamp, tau: np.ndarray) -> None:
        for gripper in self.grippers:
            gripper.tick()
        for endpoints, indices in self.trajectory:
            endpoints.tick(stamp, tau[indices])
