"""The controllers of a ros2_controllers.yaml, as controller_manager creates them, without ROS.

A MoveIt config lists its controllers with their ``type`` under ``controller_manager: ros__parameters:`` and gives
each controller's parameters under its own name::

    controller_manager:
      ros__parameters:
        panda_arm_controller: {type: joint_trajectory_controller/JointTrajectoryController}
        panda_hand_controller: {type: position_controllers/GripperActionController}
    panda_arm_controller:
      ros__parameters: {joints: [panda_joint1, ...], command_interfaces: [position]}
    panda_hand_controller:
      ros__parameters: {joint: panda_finger_joint1}

:func:`read_controllers` turns that into :class:`ControllerSpec` s. Each spec's ``command_interfaces`` are the
``<joint>/<interface>`` names it claims once active. Two controllers active together may not claim the same one:
controller_manager refuses the activation ("Unable to activate controller '…' since the command interface '…'
will be used by another controller that is being activated", ros2_control kilted,
controller_manager/src/controller_manager.cpp 4389-4397 in ``check_for_interfaces_availability_to_activate``);
:func:`check_claims` refuses the same.

``position_controllers/GripperActionController`` is ros2_controllers' gripper_controllers (jazzy branch; removed
from kilted in ros2_controllers#1652, yet MoveIt configs such as panda_moveit_config still name it).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from discrete_robot.config_files import load_yaml
from discrete_robot.errors import ModelError

JTC = "joint_trajectory_controller/JointTrajectoryController"
GRIPPER = "position_controllers/GripperActionController"
PARALLEL_GRIPPER = "parallel_gripper_action_controller/GripperActionController"
BROADCASTER = "joint_state_broadcaster/JointStateBroadcaster"
FORWARD = "forward_command_controller/ForwardCommandController"
GROUP_EFFORT = "effort_controllers/JointGroupEffortController"
#: the types this simulator creates
TYPES = (JTC, GRIPPER, PARALLEL_GRIPPER, BROADCASTER, FORWARD, GROUP_EFFORT)


@dataclass(frozen=True)
class ControllerSpec:
    """One controller: ``name``, ``type``, its ``joints`` (in the file's order) and its own ``parameters`` as the
    file gives them (nested maps kept)."""

    name: str
    type: str
    joints: tuple[str, ...]
    parameters: dict = field(default_factory=dict, compare=False)

    @property
    def command_interfaces(self) -> tuple[str, ...]:
        """The ``<joint>/<interface>`` command interfaces the controller claims when active (the broadcaster
        claims none; JTC its ``command_interfaces``, default position; the forward controller its
        ``interface_name``; the grippers their joint's position)."""
        if self.type == BROADCASTER:
            return ()
        if self.type == JTC:
            interfaces = self.parameters.get("command_interfaces") or ["position"]
        elif self.type == FORWARD:
            interfaces = [self.parameters.get("interface_name")]
        elif self.type == GROUP_EFFORT:
            interfaces = ["effort"]
        else:
            interfaces = ["position"]
        return tuple(f"{joint}/{interface}" for joint in self.joints for interface in interfaces)


def _joints(name: str, kind: str, parameters: dict, source: str) -> tuple[str, ...]:
    """The controller's joints: ``joint`` (one) for the grippers, ``joints`` (a list) for the others; the
    broadcaster's may be empty (then it broadcasts every joint)."""
    if kind in (GRIPPER, PARALLEL_GRIPPER):
        joint = parameters.get("joint")
        if not isinstance(joint, str) or not joint:
            raise ModelError(f"{source}: {name}.joint must name the gripper's joint, got {joint!r}")
        return (joint,)
    joints = parameters.get("joints", [])
    if not isinstance(joints, list) or not all(isinstance(joint, str) and joint for joint in joints):
        raise ModelError(f"{source}: {name}.joints must be a list of joint names, got {joints!r}")
    if not joints and kind != BROADCASTER:
        raise ModelError(f"{source}: {name}.joints is empty")
    if len(set(joints)) != len(joints):
        raise ModelError(f"{source}: {name}.joints names a joint twice: {joints}")
    if kind == FORWARD and parameters.get("interface_name") not in ("position", "effort"):
        raise ModelError(f"{source}: {name}.interface_name must be position or effort, got "
                         f"{parameters.get('interface_name')!r}")
    return tuple(joints)


def controllers_from_document(document, source: str = "controllers_file") -> list[ControllerSpec]:
    """The controllers of a parsed ros2_controllers.yaml, in the file's order; ModelError naming the controller
    and the field for an unknown type, a missing section or bad joints."""
    manager = document.get("controller_manager") if isinstance(document, dict) else None
    listed = manager.get("ros__parameters") if isinstance(manager, dict) else None
    if not isinstance(listed, dict):
        raise ModelError(f"{source}: no 'controller_manager: ros__parameters:' section")
    specs = []
    for name, entry in listed.items():
        if not isinstance(entry, dict) or "type" not in entry:
            continue                    # the manager's own parameters (update_rate, ...)
        kind = str(entry["type"])
        if kind not in TYPES:
            raise ModelError(f"{source}: controller '{name}' has type '{kind}', which this simulator does not "
                             f"create (it creates: {', '.join(TYPES)})")
        section = document.get(name) if isinstance(document.get(name), dict) else {}
        parameters = section.get("ros__parameters") or {}
        if not isinstance(parameters, dict):
            raise ModelError(f"{source}: {name}.ros__parameters must be a map")
        specs.append(ControllerSpec(str(name), kind, _joints(name, kind, parameters, source), parameters))
    return specs


def read_controllers(path, joint_names: Sequence[str] | None = None) -> list[ControllerSpec]:
    """The controllers of the ros2_controllers.yaml at ``path`` (read by :func:`load_yaml`), every joint checked
    against ``joint_names`` (the model's joints and mimic followers) when given, and the claims checked as
    if all were active together (:func:`check_claims`)."""
    source = f"controllers_file {path}"
    specs = controllers_from_document(load_yaml(path, "controllers_file"), source)
    if joint_names is not None:
        for spec in specs:
            unknown = [joint for joint in spec.joints if joint not in joint_names]
            if unknown:
                raise ModelError(f"{source}: {spec.name} names {unknown}, which are no joints of the robot "
                                 f"(joints: {', '.join(joint_names)})")
    check_claims(specs)
    return specs


def check_claims(active: Iterable[ControllerSpec]) -> None:
    """ModelError when two of the ``active`` controllers claim the same command interface, worded as
    controller_manager words its refusal (module docstring)."""
    claimed: dict[str, str] = {}
    for spec in active:
        for interface in spec.command_interfaces:
            if interface in claimed:
                raise ModelError(f"Unable to activate controller '{spec.name}' since the command interface "
                                 f"'{interface}' will be used by another controller that is being activated "
                                 f"('{claimed[interface]}')")
            claimed[interface] = spec.name


def default_controllers(joint_names: Sequence[str], fingers: Sequence[str],
                        arm_name: str = "joint_trajectory_controller") -> list[ControllerSpec]:
    """Controllers without a controllers file: a JTC ``arm_name`` on the joints that are not ``fingers`` (in
    ``joint_names`` order) and a gripper controller per finger joint (``gripper_controller``, or
    ``gripper_controller_<joint>`` when there are several); the fingers' mimic followers move with them through
    the model and are claimed by no one."""
    arm = tuple(joint for joint in joint_names if joint not in fingers)
    specs = [ControllerSpec(arm_name, JTC, arm, {"joints": list(arm)})] if arm else []
    for finger in fingers:
        name = "gripper_controller" if len(fingers) == 1 else f"gripper_controller_{finger}"
        specs.append(ControllerSpec(name, GRIPPER, (finger,), {"joint": finger}))
    return specs


def finger_joints(model) -> list[str]:
    """The model's finger joints: prismatic DOFs whose link carries no further movable link (a gripper's
    fingers, not a linear axis under the arm). A finger's mimic follower is no DOF and so no finger here."""
    from discrete_robot.model.robot_model import JointType

    parents = {link.parent for link in model.links}
    return [link.joint.dof_names[0] for link in model.links
            if link.joint.type is JointType.PRISMATIC and link.name not in parents]
