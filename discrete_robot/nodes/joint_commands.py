"""The topic-based hardware contract's commands (topic_based_ros2_control, as Isaac Sim takes them).

A system ROS 2's controller_manager with ``topic_based_ros2_control/TopicBasedSystem`` publishes its command
interfaces as sensor_msgs/JointState on a command topic, by joint name: ``position``, ``velocity`` or ``effort``
(each empty or one value per name). The simulator takes them for the joints no active controller of its own
claims: a position (with the velocity, when given, as the desired velocity) or a velocity alone is tracked by the
node's computed-torque law (PD with gravity compensation, the desired acceleration 0); an effort is applied as it
is. A joint keeps its last command until the next. A claimed joint ignores the commands, with one warning.
"""

from collections.abc import Callable

import numpy as np
from sensor_msgs.msg import JointState

from discrete_robot.control.trajectory import Reference
from discrete_robot.nodes.common import STATE_QOS, ParameterSpec, ros_name

FIELDS = ("position", "velocity", "effort")
#: the contract's topics: topic_based_ros2_control's defaults are /robot_joint_command and /robot_joint_states
TOPICS = [ParameterSpec("joint_commands_topic", "joint_commands", "sensor_msgs/JointState commands by name "
                        "(position, velocity or effort) for the joints no controller claims "
                        "(topic_based_ros2_control's)",
                        check=ros_name(), read_only=True),
          ParameterSpec("joint_states_topic", "joint_states", "the joint state topic (sensor_msgs/JointState)",
                        check=ros_name(), read_only=True)]


class JointCommands:
    """The last command per joint of ``dofs`` from ``topic`` on ``node``; ``claimed()`` names the joints an active
    controller claims (their commands are ignored)."""

    def __init__(self, node, topic: str, dofs: list[str], claimed: Callable[[], set[str]]):
        self.node, self.topic, self.dofs, self.claimed = node, topic, dofs, claimed
        self.commands: dict[int, dict[str, float]] = {}      # model index -> {field: value}
        self.warned: set[str] = set()
        node.create_subscription(JointState, topic, self.on_command, STATE_QOS)

    def on_command(self, msg: JointState) -> None:
        names = list(msg.name)
        unknown = [name for name in names if name not in self.dofs]
        fields = {field: np.asarray(getattr(msg, field), dtype=float) for field in FIELDS}
        wrong = [field for field, values in fields.items() if values.size not in (0, len(names))]
        bad = [field for field, values in fields.items() if not np.isfinite(values).all()]
        if unknown or wrong or bad:
            reason = (f"unknown joints {unknown} (joints: {', '.join(self.dofs)})" if unknown else
                      f"{wrong[0]} has not one value per name" if wrong else f"{bad[0]} is not finite")
            self.node.refusals.warning(reason, f"{self.topic}: ignored: {reason}")
            return
        claimed = self.claimed()
        for i, name in enumerate(names):
            if name in claimed:
                if name not in self.warned:
                    self.warned.add(name)
                    self.node.get_logger().warning(f"{self.topic}: {name} is claimed by an active controller; "
                                                   f"its commands are ignored")
                continue
            command = {field: float(values[i]) for field, values in fields.items() if values.size}
            if command:
                self.commands[self.dofs.index(name)] = command

    def drop(self, claimed: set[str]) -> None:
        """Forget the commands of the joints now claimed by a controller."""
        self.commands = {index: c for index, c in self.commands.items() if self.dofs[index] not in claimed}

    @property
    def tracked(self) -> np.ndarray:
        """The model indices of the joints with a position or velocity command."""
        return np.array([index for index, c in self.commands.items() if "position" in c or "velocity" in c],
                        dtype=int)

    def reference(self, q: np.ndarray) -> Reference:
        """The desired state of the :attr:`tracked` joints: the commanded position (else where the joint is, so
        only its velocity is tracked), the commanded velocity (else 0), the acceleration 0."""
        tracked = self.tracked
        desired = [self.commands[i].get("position", q[i]) for i in tracked]
        velocity = [self.commands[i].get("velocity", 0.0) for i in tracked]
        return Reference(np.array(desired), np.array(velocity), np.zeros(len(tracked)))

    def efforts(self, tau: np.ndarray) -> np.ndarray:
        """``tau`` with the effort-only commanded joints' torques set to their commands."""
        for index, command in self.commands.items():
            if command.keys() == {"effort"}:
                tau[index] = command["effort"]
        return tau
