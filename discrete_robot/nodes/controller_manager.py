"""controller_manager's services on discrete_robot_node, as MoveIt's Ros2ControlManager and ``ros2 control`` call them.

Under the node's namespace (controller_manager_msgs, ros2_control kilted):

- ``controller_manager/list_controllers``: each controller's name, ``type``, ``state`` (active / inactive), the
  ``<joint>/<interface>`` command interfaces it claims while active, and the interfaces it requires;
- ``controller_manager/switch_controller``: deactivates, then activates, as :func:`planned_switch` decides;
- ``controller_manager/list_controller_types``: the types this simulator creates;
- ``controller_manager/list_hardware_interfaces``: every joint's position, velocity and effort command and state
  interfaces, claimed or not.

An inactive controller's action rejects new goals with a reason (its running goal ends on deactivation); the joints
no active controller claims hold where they were at the switch, or follow ``joint_commands``
(discrete_robot.nodes.joint_commands).
"""

from collections.abc import Iterable, Sequence

from discrete_robot.control.configuration import BROADCASTER, TYPES, ControllerSpec, check_claims
from discrete_robot.errors import ModelError

INTERFACES = ("position", "velocity", "effort")
BASE_CLASS = "controller_interface::ControllerInterface"


def planned_switch(specs: dict[str, ControllerSpec], active: set[str], activate: Sequence[str],
                   deactivate: Sequence[str], strict: bool) -> tuple[set[str], list[str]]:
    """The active controllers after deactivating ``deactivate`` and then activating ``activate`` from ``active``,
    and the problems met. As controller_manager's switch_controller (ros2_control kilted,
    controller_manager/src/controller_manager.cpp): an unknown name (1975-1993), activating an active controller
    (2063-2071), deactivating an inactive one (2134-2139) or an activation that would make two active controllers
    claim one command interface (4389-4397, configuration.check_claims) is a problem; with ``strict`` (STRICT) any
    problem leaves every controller as it was (1988-1993, 2115-2119, 2165-2169), with BEST_EFFORT (also for an
    unspecified strictness, the manager's default, 1918-1920) the controllers with a problem are left out and the
    others switched (2104-2113, 2157-2163)."""
    problems: list[str] = []
    after = set(active)
    for name in deactivate:
        if name not in specs:
            problems.append(f"Could not deactivate controller with name '{name}' because no controller with this "
                            f"name exists")
        elif name not in active:
            problems.append(f"Controller with name '{name}' can not be deactivated since it is not active.")
        else:
            after.discard(name)
    for name in activate:
        if name not in specs:
            problems.append(f"Could not activate controller with name '{name}' because no controller with this "
                            f"name exists")
        elif name in after:
            problems.append(f"Controller with name '{name}' is already active.")
        else:
            try:
                check_claims([specs[other] for other in sorted(after)] + [specs[name]])
            except ModelError as error:
                problems.append(str(error))
                continue
            after.add(name)
    if strict and problems:
        return set(active), problems
    return after, problems


def state_interfaces(spec: ControllerSpec, dofs: Iterable[str]) -> list[str]:
    """The ``<joint>/<interface>`` state interfaces ``spec`` reads: the broadcaster every joint's; JTC its
    ``state_interfaces`` (default position, velocity); the others their joints' position and velocity."""
    if spec.type == BROADCASTER:
        return [f"{joint}/{interface}" for joint in dofs for interface in INTERFACES]
    interfaces = spec.parameters.get("state_interfaces") or ["position", "velocity"]
    return [f"{joint}/{interface}" for joint in spec.joints for interface in interfaces]


class ControllerManager:
    """The services of ``controller_manager/`` on ``node`` for the controllers of ``controllers``
    (discrete_robot.nodes.controller_set.ControllerSet); all active at start."""

    def __init__(self, node, controllers):
        from controller_manager_msgs.srv import (
            ListControllers,
            ListControllerTypes,
            ListHardwareInterfaces,
            SwitchController,
        )

        self.node, self.controllers = node, controllers
        self.specs = {spec.name: spec for spec in controllers.specs}
        self.active = set(self.specs)
        self.strict = SwitchController.Request.STRICT
        for srv_type, name, callback in [(ListControllers, "list_controllers", self.on_list_controllers),
                                         (SwitchController, "switch_controller", self.on_switch),
                                         (ListControllerTypes, "list_controller_types", self.on_list_types),
                                         (ListHardwareInterfaces, "list_hardware_interfaces", self.on_list_hardware)]:
            node.create_service(srv_type, f"controller_manager/{name}", callback)

    def claimed(self) -> set[str]:
        return {interface for name in self.active for interface in self.specs[name].command_interfaces}

    def on_list_controllers(self, _request, response):
        from controller_manager_msgs.msg import ControllerState

        for spec in self.specs.values():
            active = spec.name in self.active
            response.controller.append(ControllerState(
                name=spec.name, type=spec.type, state="active" if active else "inactive",
                update_rate=int(self.node.get_parameter("publish_rate").value),
                claimed_interfaces=list(spec.command_interfaces) if active else [],
                required_command_interfaces=list(spec.command_interfaces),
                required_state_interfaces=state_interfaces(spec, self.controllers.dofs)))
        return response

    def on_switch(self, request, response):
        after, problems = planned_switch(self.specs, self.active, list(request.activate_controllers),
                                         list(request.deactivate_controllers), request.strictness == self.strict)
        for name in sorted(self.active - after):
            self.controllers.set_active(name, False, f"controller {name} was deactivated")
        for name in sorted(after - self.active):
            self.controllers.set_active(name, True, "")
        changed = after != self.active
        self.active = after
        for problem in problems:
            self.node.get_logger().warning(f"controller_manager/switch_controller: {problem}")
        response.ok = not problems or (changed and request.strictness != self.strict)
        response.message = "\n".join(problems)
        return response

    def on_list_types(self, _request, response):
        response.types = list(TYPES)
        response.base_classes = [BASE_CLASS] * len(TYPES)
        return response

    def on_list_hardware(self, _request, response):
        from controller_manager_msgs.msg import HardwareInterface

        claimed = self.claimed()
        for joint in self.controllers.dofs:
            for interface in INTERFACES:
                name = f"{joint}/{interface}"
                response.command_interfaces.append(HardwareInterface(
                    name=name, data_type="double", is_available=True, is_claimed=name in claimed))
                response.state_interfaces.append(HardwareInterface(
                    name=name, data_type="double", is_available=True, is_claimed=False))
        return response
