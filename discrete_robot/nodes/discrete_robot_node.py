"""discrete_robot_node: a fixed-base robot model simulated live with the discrete dynamic model (or VI, RK45).

Publishes (stamped with simulated time)
- ``joint_states`` (``joint_states_topic``; sensor_msgs/JointState, reliable, depth 10): names = the model's generalised
  coordinates (= the URDF's movable joints); positions, velocities, and as efforts the generalised forces
  applied over the last step (after saturation at the model's effort limits).
- ``dynamic_joint_states`` (control_msgs/DynamicJointState): the same state as each joint's position, velocity and
  effort interfaces, as joint_state_broadcaster publishes it (nodes/joint_state_broadcaster.py).
- ``robot_description`` (std_msgs/String, transient local): the model's URDF (a URDF's own), unless taken from a topic.
- ``discrete_robot/energy`` (std_msgs/Float64): total energy T + V of the simulated state, J.
- ``/clock``, ``/tf``, ``/tf_static``, ``/diagnostics``: see discrete_robot.nodes.simulator.
- ``objects/<name>/pose``, TF ``object/<name>``, ``objects/markers``: scene_file's objects (nodes.scene_objects).

Subscribes
- ``joint_effort_commands`` (std_msgs/Float64MultiArray): one generalised force per joint, joint_states
  order (N m or N); held until the next command. Cancels trajectory tracking.
- ``joint_trajectory`` (trajectory_msgs/JointTrajectory): the older name of
  ``<controller_name>/joint_trajectory``, followed the same way.
- ``joint_commands`` (``joint_commands_topic``; sensor_msgs/JointState): commands by name for the joints no
  controller claims (discrete_robot.nodes.joint_commands).

The controllers (discrete_robot.nodes.controller_set): every controller ``controllers_file`` lists under
``controller_manager: ros__parameters:``, created from its type (discrete_robot.nodes.controllers); without
such a list, one joint_trajectory_controller named ``controller_name`` (discrete_robot.nodes.trajectory_controller,
with JTC's endpoints, parameters, goal checks, tolerances, interpolation and results) on the ``joints`` parameter,
else ``controllers_file``'s, else those a URDF's ``<ros2_control>`` tags give a command interface, else all. The
start-up log names each controller with its type and joints. While they drive, the other joints are held at rest
where they were when they took over. References are tracked by computed torque (gains ``kp`` 1/s², ``kd`` 1/s),
efforts saturated at the model's limits (discrete_robot.control).

Holding (``hold_on_start``, default true): the joints hold their position from the start, after ``reset`` and
after ``set_state``, as a controller holds a robot that has no goal (gravity compensation plus PD), and after a
goal ends or is canceled. ``reset`` and ``set_state`` first end a running goal (aborted, with the reason) and
clear effort commands; an effort command, or ``hold_on_start`` false, leaves the joints to the commanded (or no)
torque.

Services under ``simulation/``: pause, resume, step, reset (objects too), set_state (and the objects it names;
discrete_robot.nodes.simulator). Bad input (NaN, wrong length, unknown joint or object) is logged and ignored;
invalid parameters, model or scene files stop the node at startup with the reason.
"""

import numpy as np
from rclpy.parameter import Parameter
from std_msgs.msg import Float64, Float64MultiArray, String

from discrete_robot.control.computed_torque import EffortCommand, TrajectoryTracking, at_limit
from discrete_robot.discrete.integrators import IntegratorKind
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.description import package_config_path
from discrete_robot.model.sources import robot_description
from discrete_robot.model.urdf import fixed_transforms, joint_transforms
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    ROBOT_DESCRIPTION,
    STATE_QOS,
    ParameterSpec,
    RateLimitedLog,
    declare_parameters,
    finite_values,
    node_main,
    non_negative,
    one_of,
    ros_name,
)
from discrete_robot.nodes.controller_set import ControllerSet
from discrete_robot.nodes.conversions import merged_joint_state
from discrete_robot.nodes.description_topic import DESCRIPTION_TOPIC, described_model
from discrete_robot.nodes.joint_commands import TOPICS
from discrete_robot.nodes.joint_state_broadcaster import JointStateBroadcaster
from discrete_robot.nodes.jtc_parameters import CONTROLLER_PARAMETERS, CONTROLLERS_FILE, JOINTS
from discrete_robot.nodes.parameters import model_file
from discrete_robot.nodes.scene_objects import SCENE_FILE, ObjectPublisher, object_poses, object_transforms, scene_world
from discrete_robot.nodes.simulator import SimulatorNode, simulator_parameters
from discrete_robot.nodes.start_pose import START_POSE, start_positions
from discrete_robot.simulation.fixed_base import FixedBaseWorld
from discrete_robot.validation import finite_vector, per_joint_values

DEFAULT_MODEL = "planar_2link.yaml"
ENERGY_TOPIC = "discrete_robot/energy"

PARAMETERS = [
    model_file(DEFAULT_MODEL),
    ROBOT_DESCRIPTION,
    DESCRIPTION_TOPIC,
    ParameterSpec("integrator", IntegratorKind.DISCRETE.value,
                  "discrete (energy-conserving discrete model), variational (midpoint VI) or rk45 (comparison)",
                  check=one_of(*(k.value for k in IntegratorKind)), read_only=True),
    *simulator_parameters(time_step=0.001, publish_rate=100.0),
    ParameterSpec("frame_prefix", "", "prefix of the TF frames (as robot_state_publisher's frame_prefix)",
                  check=ros_name(relative_only=True, trailing_slash=True, empty=True), read_only=True),
    ParameterSpec("initial_positions", [], "initial joint positions, rad or m, one per joint in joint_states "
                                           "order (or initial_positions.<joint> by name); empty = the model's; "
                                           "clamped into the limits with a warning",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("initial_velocities", [], "initial joint velocities, rad/s or m/s, one per joint; empty = rest",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("kp", 100.0, "trajectory tracking position gain, 1/s² (error dynamics ë + kd ė + kp e = 0)",
                  check=non_negative, value_range=(0.0, 1e6)),
    ParameterSpec("kd", 20.0, "trajectory tracking velocity gain, 1/s", check=non_negative, value_range=(0.0, 1e4)),
    ParameterSpec("hold_on_start", True, "hold the joints where they are (gravity compensation + PD) at start, "
                                         "after reset and after set_state; false: no torque until a command",
                  read_only=True),
    ParameterSpec("controller_name", "joint_trajectory_controller",
                  "the action is <controller_name>/follow_joint_trajectory", check=ros_name(), read_only=True),
    JOINTS,
    CONTROLLERS_FILE,
    *TOPICS,
    *START_POSE, SCENE_FILE,
    *CONTROLLER_PARAMETERS,
]

#: feedback and saturation reports: at most this often, s
SATURATION_REPORT_PERIOD_S = 1.0


class DiscreteRobotNode(SimulatorNode):
    """Simulates a robot model in (scaled) real time: joint states, URDF, energy, TF, trajectory action."""

    NODE_NAME = "discrete_robot_node"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.saturation_log = RateLimitedLog(self.get_logger(), SATURATION_REPORT_PERIOD_S)
        values = declare_parameters(self, [spec for spec in PARAMETERS if spec not in CONTROLLER_PARAMETERS])
        model, publish_description = described_model(self, values, package_config_path(DEFAULT_MODEL))
        self.model = model
        self.joints, self.effort_limits = model.joint_names, model.effort_limits
        self.scene, height = scene_world(values["scene_file"], model, q0 := start_positions(self, model, values),
                                         self.get_logger().warning)
        self.arm = FixedBaseWorld(model, values["integrator"], values["time_step"], q0,
                                  per_joint_values(values["initial_velocities"], np.zeros(model.dof),
                                                   "initial_velocities", self.joints), scene=self.scene)
        self.simulation = self.arm.simulation
        self.gains = {name: values[name] for name in ("kp", "kd")}
        self.effort = EffortCommand(np.arange(model.dof), self.effort_limits)
        self.broadcaster = JointStateBroadcaster(self, values["joint_states_topic"])
        self.energy_pub = self.create_publisher(Float64, ENERGY_TOPIC, STATE_QOS)
        self.objects = ObjectPublisher(self, self.scene, height)
        if publish_description:
            self.create_publisher(String, "robot_description", LATCHED_QOS).publish(
                String(data=robot_description(model)))
        self.create_subscription(Float64MultiArray, "joint_effort_commands", self.on_effort, STATE_QOS)
        self.controller = ControllerSet(self, model, values, self._joint_state)
        # the controlled joints track the controllers' references; the others (held: their positions when the
        # controllers take over) are held at rest while they drive
        self.tracking = TrajectoryTracking(self.arm.system, self.controller.controlled, self.effort_limits,
                                           lambda t: self.controller.reference(t, self.tracking.held), self._pd_gains)
        self.hold_on_start = values["hold_on_start"]
        if self.hold_on_start:
            self.controller.hold()
        self.add_post_set_parameters_callback(self.on_parameters_set)
        self.get_logger().info(f"simulating '{model.name}' ({model.dof} joints: {', '.join(self.joints)}) "
                               f"with the {values['integrator']} integrator, h = {values['time_step']} s; "
                               f"actions {', '.join(self.controller.actions) or '-'}")
        for line in self.controller.lines:
            self.get_logger().info(line)
        self.start_simulation(values, hardware_id=model.name)

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        """Validated by declare_parameters' guard first; gains apply from the next step (the simulator takes
        real_time_factor)."""
        self.gains.update({p.name: p.value for p in parameters if p.name in self.gains})

    def on_effort(self, msg: Float64MultiArray) -> None:
        try:
            self.effort.command = finite_vector(msg.data, len(self.joints), "joint effort command")
        except InputError as error:
            self.refusals.warning(str(error), f"ignored: {error} (joints: {', '.join(self.joints)})")
            return
        self.controller.release("replaced by a joint_effort_commands message")
        self.tracking.release()

    def _joint_state(self) -> tuple[float, np.ndarray, np.ndarray]:
        """Simulated time (s), every joint's positions and velocities: what the controllers read."""
        return self.simulation.time, self.simulation.q, self.simulation.qd

    def torques(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The generalised forces held over the step starting at simulated time t, saturated at the limits."""
        tau = self.controller.commanded_efforts((self.tracking if self.controller.active else self.effort).update(
            t, q, qd), t, q, qd)
        saturated = at_limit(tau, self.effort_limits)
        if saturated.size:
            self.saturation_log.warning("saturated", f"effort limits active on {[self.joints[i] for i in saturated]}")
        return tau

    def _pd_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """kp (1/s²) and kd (1/s) per degree of freedom: the controllers' gains.<joint>.p and .d where set, else
        the node's kp and kd (the held joints too)."""
        return self.controller.gains(self.gains["kp"], self.gains["kd"])

    @property
    def world(self) -> FixedStepSimulation:
        return self.simulation

    def advance_world(self, steps: int) -> None:
        # commanded efforts are held over the tick's steps (the simulation then takes them in compiled runs); a
        # tracked trajectory's torques depend on each step's state
        tracking = self.controller.active
        if tracking:
            self.controller.take_over()
            self.tracking.controlled = self.controller.controlled
            self.tracking.take_over(self.simulation.q)
        self.arm.step(steps, self.torques if tracking else self.torques(self.world_time, None, None))

    def on_step_failed(self) -> None:
        self._restart_commands(f"the simulation step failed at t = {self.simulation.time:.3f} s")

    def on_reset(self) -> None:
        self._restart_commands(f"the simulation was reset at t = {self.simulation.time:.3f} s")

    def reset_world(self) -> None:
        self.arm.reset()
        if self.hold_on_start:
            self.controller.hold()

    def set_world_state(self, request) -> None:
        if request.set_base:
            raise InputError("set_base: this robot's base is fixed")
        q, qd = merged_joint_state(self.joints, request.joint_state, self.simulation.q, self.simulation.qd)
        self.arm.set_state(q, qd, object_poses(request))
        self._restart_commands(f"the state was set at t = {self.simulation.time:.3f} s")
        if self.hold_on_start:
            self.controller.hold()

    def _restart_commands(self, reason: str) -> None:
        """Effort commands cleared and the running goal ended (aborted with ``reason``): a new state (a reset, a
        set_state, the state before a failed step) starts without the commands meant for the old one."""
        self.effort.command = np.zeros(len(self.joints))
        self.controller.release(reason)
        self.tracking.release()

    def publish_state(self, stamp) -> None:
        simulation = self.simulation
        self.broadcaster.publish(stamp, self.joints, simulation.q, simulation.qd, simulation.tau)
        self.energy_pub.publish(Float64(data=float(simulation.energy())))
        self.controller.tick(stamp, simulation.tau)
        self.objects.publish(stamp)

    def moving_transforms(self):
        return [*joint_transforms(self.model, self.simulation.q), *object_transforms(self.scene, self.objects.height)]

    def static_transforms(self):
        return fixed_transforms(self.model)

    def diagnostic_values(self) -> dict[str, float]:
        return self.arm.diagnostic_values()


main = node_main(DiscreteRobotNode)
