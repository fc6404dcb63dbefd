"""discrete_robot_node: a fixed-base robot model simulated live with the discrete dynamic model (or VI, RK45).

Publishes
- ``joint_states`` (sensor_msgs/JointState, reliable, depth 10): stamped; names = the model's generalised
  coordinates (= the URDF's movable joints); positions, velocities, and as efforts the generalised forces
  applied over the last step (after saturation at the model's effort limits).
- ``robot_description`` (std_msgs/String, transient local): the URDF of the model (model.urdf.to_urdf).
- ``discrete_robot/energy`` (std_msgs/Float64): total energy T + V of the simulated state, J.

Subscribes
- ``joint_effort_commands`` (std_msgs/Float64MultiArray): one generalised force per joint, joint_states
  order (N m or N); held until the next command. Cancels trajectory tracking.
- ``joint_trajectory`` (trajectory_msgs/JointTrajectory): joint_names any permutation of the model's;
  starts when received; tracked by feedforward inverse dynamics plus PD (computed torque, gains
  ``kp`` 1/s², ``kd`` 1/s; see discrete_robot.discrete.tracking); the last point is held at the end.
  Replaces any effort command.

Each timer tick (``publish_rate``) advances the simulation by ``real_time_factor`` / ``publish_rate``
simulated seconds in fixed steps of ``time_step`` and publishes. Bad input (NaN, wrong length, unknown
joint name) is logged and ignored; a step that fails to converge is logged, the commands are cleared and
the state is kept. Invalid parameters or model files stop the node at startup with the reason.
"""

import time

import numpy as np
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from discrete_robot.discrete.integrators import IntegratorKind
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.discrete.tracking import TrajectoryReference, saturate, tracking_torques
from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import to_urdf
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    declare_parameters,
    duration_seconds,
    finite_values,
    joint_state_msg,
    node_main,
    non_negative,
    one_of,
    positive,
)
from discrete_robot.validation import finite_vector, per_joint_values

DEFAULT_MODEL = "planar_2link.yaml"
ENERGY_TOPIC = "discrete_robot/energy"
DYNAMIC = ("real_time_factor", "kp", "kd")

PARAMETERS = [
    ParameterSpec("model_file", "", "robot model YAML (docs/model_format.md, fixed base); empty = the shipped "
                                    f"config/{DEFAULT_MODEL}", read_only=True),
    ParameterSpec("integrator", IntegratorKind.DISCRETE.value,
                  "discrete (energy-conserving discrete model), variational (midpoint VI) or rk45 (comparison)",
                  check=one_of(*(k.value for k in IntegratorKind)), read_only=True),
    ParameterSpec("time_step", 0.02, "fixed integration step, s", check=positive, value_range=(1e-5, 1.0),
                  read_only=True),
    ParameterSpec("publish_rate", 50.0, "rate of the simulation ticks and of the published topics, Hz",
                  check=positive, value_range=(0.1, 1000.0), read_only=True),
    ParameterSpec("real_time_factor", 1.0, "simulated seconds per wall-clock second (1 = real time, > 1 faster)",
                  check=positive, value_range=(1e-3, 100.0)),
    ParameterSpec("initial_positions", [], "initial joint positions, rad or m, one per joint in joint_states "
                                           "order; empty = the model's initial positions",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("initial_velocities", [], "initial joint velocities, rad/s or m/s, one per joint; empty = rest",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("kp", 100.0, "trajectory tracking position gain, 1/s² (error dynamics ë + kd ė + kp e = 0)",
                  check=non_negative, value_range=(0.0, 1e6)),
    ParameterSpec("kd", 20.0, "trajectory tracking velocity gain, 1/s", check=non_negative, value_range=(0.0, 1e4)),
]



class DiscreteRobotNode(GuardedNode):
    """Simulates a robot model in (scaled) real time and publishes its joint states, URDF and energy."""

    NODE_NAME = "discrete_robot_node"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        path = values["model_file"] or str(package_config_path(DEFAULT_MODEL))
        model = load_model(path)
        self.system = RigidBodySystem(model)
        self.joints = model.joint_names
        self.effort_limits = model.effort_limits
        q0 = per_joint_values(values["initial_positions"], model.initial_positions, "initial_positions", self.joints)
        qd0 = per_joint_values(values["initial_velocities"], np.zeros(model.dof), "initial_velocities", self.joints)
        self.simulation = FixedStepSimulation(self.system, values["integrator"], values["time_step"], q0, qd0)
        self.publish_rate = values["publish_rate"]
        self.gains = {name: values[name] for name in DYNAMIC}
        self.effort = np.zeros(model.dof)
        self.trajectory: TrajectoryReference | None = None
        self.trajectory_start = 0.0

        self.joint_pub = self.create_publisher(JointState, "joint_states", STATE_QOS)
        self.energy_pub = self.create_publisher(Float64, ENERGY_TOPIC, STATE_QOS)
        self.description_pub = self.create_publisher(String, "robot_description", LATCHED_QOS)
        self.description_pub.publish(String(data=to_urdf(model)))
        self.create_subscription(Float64MultiArray, "joint_effort_commands", self.on_effort, STATE_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, STATE_QOS)
        self.add_post_set_parameters_callback(self.on_parameters_set)
        self.create_timer(1.0 / self.publish_rate, self.tick)
        self.get_logger().info(f"simulating '{model.name}' ({model.dof} joints: {', '.join(self.joints)}) from {path} "
                               f"with the {values['integrator']} integrator, h = {values['time_step']} s")
        self.publish()

    # ------------------------------------------------------------------------------------------ inputs

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        """Validated by declare_parameters' guard before this runs; only the dynamic ones change anything."""
        for parameter in parameters:
            if parameter.name in DYNAMIC:
                self.gains[parameter.name] = parameter.value

    def on_effort(self, msg: Float64MultiArray) -> None:
        try:
            self.effort = finite_vector(msg.data, len(self.joints), "joint effort command")
        except InputError as error:
            self.get_logger().error(f"ignored: {error} (joints: {', '.join(self.joints)})")
            return
        self.trajectory = None

    def on_trajectory(self, msg: JointTrajectory) -> None:
        points = msg.points
        velocities = [p.velocities for p in points] if points and all(len(p.velocities) for p in points) else None
        try:
            self.trajectory = TrajectoryReference.from_message_fields(
                self.joints, msg.joint_names, [duration_seconds(p.time_from_start) for p in points],
                [p.positions for p in points], velocities, current=self.simulation.q)
        except InputError as error:
            self.get_logger().error(f"ignored: {error}")
            return
        self.trajectory_start = self.simulation.time
        self.get_logger().info(f"tracking a trajectory of {len(points)} points over {self.trajectory.duration:.3f} s")

    # ------------------------------------------------------------------------------------------ simulation

    def torques(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The generalised forces held over the step starting at simulated time t."""
        if self.trajectory is None:
            return saturate(self.effort, self.effort_limits)
        reference = self.trajectory.sample(t - self.trajectory_start)
        return tracking_torques(self.system, q, qd, reference, self.gains["kp"], self.gains["kd"],
                                self.effort_limits)

    def tick(self) -> None:
        start = time.perf_counter()
        try:
            self.simulation.advance(self.gains["real_time_factor"] / self.publish_rate, self.torques)
        except DiscreteRobotError as error:
            self.get_logger().error(f"simulation step failed: {error}; commands cleared, state kept at "
                                    f"t = {self.simulation.time:.3f} s")
            self.effort = np.zeros(len(self.joints))
            self.trajectory = None
        self.publish()
        if time.perf_counter() - start > 1.0 / self.publish_rate:
            self.get_logger().warning("the simulation cannot keep up with publish_rate x real_time_factor; "
                                      "lower real_time_factor or raise time_step", throttle_duration_sec=5.0)

    def publish(self) -> None:
        simulation = self.simulation
        stamp = self.get_clock().now().to_msg()
        self.joint_pub.publish(joint_state_msg(stamp, self.joints, simulation.q, simulation.qd, simulation.tau))
        self.energy_pub.publish(Float64(data=float(simulation.energy())))


main = node_main(DiscreteRobotNode)
