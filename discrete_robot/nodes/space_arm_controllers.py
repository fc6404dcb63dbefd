"""The space robot's arms as joint_trajectory_controllers, torque-driven on the free-floating base.

One controller per arm (an arm: a link attached to the base and its subtree), named ``arm_controllers[i]``
or ``<arm's root link>_controller``, with the endpoints and contract of discrete_robot.nodes.
trajectory_controller (``<name>/follow_joint_trajectory``, ``/controller_state``, ``/query_state``,
``/joint_trajectory``) and JTC's parameters under ``<name>.`` (``<name>.constraints.goal_time``, ...; a
``controllers_file``'s ``<name>`` section gives them too). Its joints are the arm's entries of
``space_robot/joint_states``. At each tick the arms following a trajectory get computed torques on the
floating base (discrete_robot.control.floating_base, gains ``kp`` 1/s², ``kd`` 1/s), held over the tick's steps as
ros2_control holds a command between updates; the other arms keep the commanded torques. The torques are
internal: the base reacts and the momenta change only by the external loads' impulse. The points' efforts
are not used on this robot (its feedforward is the floating-base inverse dynamics of the reference).
"""

from collections.abc import Callable

import numpy as np
from rclpy.parameter import Parameter

from discrete_robot.control.floating_base import BASE, arm_torques
from discrete_robot.nodes.common import ParameterSpec, StartupError, non_negative
from discrete_robot.nodes.jtc_parameters import CONTROLLERS_FILE, declare_controller_parameters
from discrete_robot.nodes.trajectory_controller import TrajectoryControllerEndpoints
from discrete_robot.space.recursive import arm_dof_indices

ARM_PARAMETERS = [
    ParameterSpec("arm_controllers", [], "the arms' controller names, one per arm (the base's links in model "
                                         "order); empty = <arm's root link>_controller",
                  type=Parameter.Type.STRING_ARRAY, read_only=True),
    CONTROLLERS_FILE,
    ParameterSpec("kp", 100.0, "arm trajectory tracking position gain, 1/s²", check=non_negative,
                  value_range=(0.0, 1e6)),
    ParameterSpec("kd", 20.0, "arm trajectory tracking velocity gain, 1/s", check=non_negative,
                  value_range=(0.0, 1e4)),
]


class SpaceArmControllers:
    """The arms' controllers on ``node``; ``sample()`` gives the simulator's current Sample."""

    def __init__(self, node, robot, values: dict, sample: Callable):
        names = list(values["arm_controllers"]) or [f"{robot.links[arm[0] - 1].name}_controller" for arm in robot.arms]
        if len(names) != len(robot.arms) or len(set(names)) != len(names):
            raise StartupError(f"arm_controllers: one distinct name per arm ({len(robot.arms)} arms), got {names}")
        self.robot, self.sample, self.gains = robot, sample, {"kp": values["kp"], "kd": values["kd"]}
        self.indices = [np.asarray(rates) - BASE for rates in arm_dof_indices(robot)]
        self.controllers = []
        for name, index in zip(names, self.indices, strict=True):
            joints = [robot.dof_names[i] for i in index]
            parameters = declare_controller_parameters(node, name, joints, values["controllers_file"], f"{name}.")
            self.controllers.append(TrajectoryControllerEndpoints(
                node, name, joints, parameters, lambda index=index: self._state(index), prefix=f"{name}."))
        node.add_post_set_parameters_callback(self.on_parameters_set)

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        self.gains.update({p.name: p.value for p in parameters if p.name in self.gains})

    def _state(self, index: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        sample = self.sample()
        return sample.time, sample.joint_positions[index], sample.state.joint_rates[index]

    def torques(self, simulator, commanded: np.ndarray) -> np.ndarray | None:
        """The joint torques for the next tick: computed torque on the arms that follow a trajectory (at the
        simulator's time and state), ``commanded`` on the others; None while no arm follows one (the commanded
        torques stand: every release is followed by the node applying its commands again)."""
        active = [(controller, index) for controller, index in zip(self.controllers, self.indices, strict=True)
                  if controller.active]
        if not active:
            return None
        sample = simulator.sample()
        return arm_torques(self.robot, sample.state, simulator.loads, commanded, sample.joint_positions,
                           [(index, controller.sample(sample.time)) for controller, index in active],
                           self.gains["kp"], self.gains["kd"])

    def tick(self, stamp, torques: np.ndarray) -> None:
        for controller, index in zip(self.controllers, self.indices, strict=True):
            controller.tick(stamp, torques[index])

    def release(self, reason: str) -> None:
        """Every arm back to the commanded torques; running goals end (INVALID_GOAL, ``reason``)."""
        for controller in self.controllers:
            controller.release(reason)
