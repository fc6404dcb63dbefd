"""discrete_robot_node: a fixed-base robot model simulated live with the discrete dynamic model (or VI, RK45).

Publishes (stamped with simulated time)
- ``joint_states`` (sensor_msgs/JointState, reliable, depth 10): names = the model's generalised
  coordinates (= the URDF's movable joints); positions, velocities, and as efforts the generalised forces
  applied over the last step (after saturation at the model's effort limits).
- ``robot_description`` (std_msgs/String, transient local): the URDF of the model (model.urdf.to_urdf).
- ``discrete_robot/energy`` (std_msgs/Float64): total energy T + V of the simulated state, J.
- ``/clock``, ``/tf``, ``/tf_static``, ``/diagnostics``: see discrete_robot.nodes.simulator.

Subscribes
- ``joint_effort_commands`` (std_msgs/Float64MultiArray): one generalised force per joint, joint_states
  order (N m or N); held until the next command. Cancels trajectory tracking.
- ``joint_trajectory`` (trajectory_msgs/JointTrajectory): joint_names any permutation of the model's;
  starts when received; tracked as the action's goals are (without tolerances). Replaces any effort command.

Action ``<controller_name>/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory, the name
joint_trajectory_controller serves): the trajectory is tracked by computed torque (feedforward inverse
dynamics, or the points' efforts when every point has them, plus PD with gains ``kp`` 1/s², ``kd`` 1/s; see
discrete_robot.discrete.tracking), efforts saturated at the model's limits; path and goal tolerances and the
goal time tolerance as control_msgs defines them (discrete_robot.discrete.execution); feedback (desired,
actual, error) every tick; cancel holds the position reached; a new goal preempts the running one (which
ends aborted with INVALID_GOAL, as joint_trajectory_controller does).

Services under ``simulation/``: pause, resume, step, reset, set_state (discrete_robot.nodes.simulator).
Bad input (NaN, wrong length, unknown joint name) is logged and ignored; invalid parameters or model
files stop the node at startup with the reason.
"""

from dataclasses import dataclass

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse
from rclpy.parameter import Parameter
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.execution import (
    ErrorCode,
    JointTolerance,
    Outcome,
    Tolerances,
    TrajectoryExecution,
    resolve_tolerances,
)
from discrete_robot.discrete.integrators import IntegratorKind
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.discrete.tracking import JointNamesError, TrajectoryReference, saturate, tracking_torques
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import fixed_transforms, joint_transforms, to_urdf
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    STATE_QOS,
    ParameterSpec,
    RateLimitedLog,
    declare_parameters,
    duration_seconds,
    finite_values,
    joint_state_msg,
    node_main,
    non_negative,
    one_of,
    positive,
    seconds_to_duration_fields,
)
from discrete_robot.nodes.simulator import SimulatorNode, merged_joint_state, simulator_parameters
from discrete_robot.validation import finite_vector, per_joint_values

DEFAULT_MODEL = "planar_2link.yaml"
ENERGY_TOPIC = "discrete_robot/energy"

PARAMETERS = [
    ParameterSpec("model_file", "", "robot model YAML (docs/model_format.md, fixed base); empty = the shipped "
                                    f"config/{DEFAULT_MODEL}", read_only=True),
    ParameterSpec("integrator", IntegratorKind.DISCRETE.value,
                  "discrete (energy-conserving discrete model), variational (midpoint VI) or rk45 (comparison)",
                  check=one_of(*(k.value for k in IntegratorKind)), read_only=True),
    *simulator_parameters(time_step=0.001, publish_rate=100.0),
    ParameterSpec("frame_prefix", "", "prefix of the TF frames (as robot_state_publisher's frame_prefix)",
                  read_only=True),
    ParameterSpec("initial_positions", [], "initial joint positions, rad or m, one per joint in joint_states "
                                           "order; empty = the model's initial positions",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("initial_velocities", [], "initial joint velocities, rad/s or m/s, one per joint; empty = rest",
                  check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("kp", 100.0, "trajectory tracking position gain, 1/s² (error dynamics ë + kd ė + kp e = 0)",
                  check=non_negative, value_range=(0.0, 1e6)),
    ParameterSpec("kd", 20.0, "trajectory tracking velocity gain, 1/s", check=non_negative, value_range=(0.0, 1e4)),
    ParameterSpec("controller_name", "joint_trajectory_controller",
                  "the action is <controller_name>/follow_joint_trajectory", read_only=True),
    ParameterSpec("goal_position_tolerance", 0.02, "default goal tolerance of every joint, rad or m (a goal's 0)",
                  check=positive, value_range=(1e-9, 1e3), read_only=True),
    ParameterSpec("goal_time_tolerance", 1.0, "default time after a trajectory's end to reach the goal "
                                              "tolerance, s (a goal's 0)", check=positive,
                  value_range=(1e-3, 3600.0), read_only=True),
]

#: feedback and saturation reports: at most this often, s
SATURATION_REPORT_PERIOD_S = 1.0


@dataclass
class ActiveGoal:
    """A FollowJointTrajectory goal being executed; ``done`` gets its Outcome (``canceled`` marks a cancel)."""

    handle: object
    execution: TrajectoryExecution
    done: Future
    canceled: bool = False

    def finish(self, outcome: Outcome, canceled: bool = False) -> None:
        if not self.done.done():
            self.canceled = canceled
            self.done.set_result(outcome)



class DiscreteRobotNode(SimulatorNode):
    """Simulates a robot model in (scaled) real time: joint states, URDF, energy, TF, trajectory action."""

    NODE_NAME = "discrete_robot_node"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.saturation_log = RateLimitedLog(self.get_logger(), SATURATION_REPORT_PERIOD_S)
        values = declare_parameters(self, PARAMETERS)
        path = values["model_file"] or str(package_config_path(DEFAULT_MODEL))
        self.model = model = load_model(path)
        self.system = RigidBodySystem(model)
        self.joints = model.joint_names
        self.effort_limits = model.effort_limits
        self.q0 = per_joint_values(values["initial_positions"], model.initial_positions, "initial_positions",
                                   self.joints)
        self.qd0 = per_joint_values(values["initial_velocities"], np.zeros(model.dof), "initial_velocities",
                                    self.joints)
        self.simulation = FixedStepSimulation(self.system, values["integrator"], values["time_step"], self.q0,
                                              self.qd0, model.lower, model.upper, Dissipation.from_model(model),
                                              self.joints)
        self._diagnosed = (0, 0.0)  # Newton iterations and simulated time at the last diagnostics
        self.energy0 = self.simulation.energy()
        self.gains = {name: values[name] for name in ("kp", "kd")}
        self.effort = np.zeros(model.dof)
        self.trajectory: TrajectoryReference | None = None
        self.trajectory_start = 0.0
        self.active: ActiveGoal | None = None
        n = model.dof
        self.default_tolerances = Tolerances(np.full(n, np.inf), np.full(n, np.inf),
                                             np.full(n, values["goal_position_tolerance"]), np.full(n, np.inf),
                                             values["goal_time_tolerance"])

        self.joint_pub = self.create_publisher(JointState, "joint_states", STATE_QOS)
        self.energy_pub = self.create_publisher(Float64, ENERGY_TOPIC, STATE_QOS)
        self.description_pub = self.create_publisher(String, "robot_description", LATCHED_QOS)
        self.description_pub.publish(String(data=to_urdf(model)))
        self.create_subscription(Float64MultiArray, "joint_effort_commands", self.on_effort, STATE_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, STATE_QOS)
        action = f"{values['controller_name']}/follow_joint_trajectory"
        self.action_server = ActionServer(
            self, FollowJointTrajectory, action,
            self.guard(f"action {action}", self.execute_goal, self._failed_result),
            cancel_callback=self.guard(f"action {action} cancel", self.on_cancel, lambda _: CancelResponse.REJECT))
        self.add_post_set_parameters_callback(self.on_parameters_set)
        self.get_logger().info(f"simulating '{model.name}' ({model.dof} joints: {', '.join(self.joints)}) from {path} "
                               f"with the {values['integrator']} integrator, h = {values['time_step']} s; "
                               f"action {action}")
        self.start_simulation(values, hardware_id=model.name)

    # ------------------------------------------------------------------------------------------ inputs

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        """Validated by declare_parameters' guard before this runs; only the dynamic ones change anything."""
        for parameter in parameters:
            if parameter.name in self.gains:
                self.gains[parameter.name] = parameter.value
            elif parameter.name == "real_time_factor":
                self.real_time_factor = parameter.value

    def on_effort(self, msg: Float64MultiArray) -> None:
        try:
            self.effort = finite_vector(msg.data, len(self.joints), "joint effort command")
        except InputError as error:
            self.refusals.warning(str(error), f"ignored: {error} (joints: {', '.join(self.joints)})")
            return
        self._end_goal(Outcome(ErrorCode.INVALID_GOAL, "replaced by a joint_effort_commands message"))
        self.trajectory = None

    def on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            reference = self._reference(msg)
        except InputError as error:
            self.refusals.warning(str(error), f"ignored: {error}")
            return
        self._end_goal(Outcome(ErrorCode.INVALID_GOAL, "replaced by a joint_trajectory message"))
        self.trajectory, self.trajectory_start = reference, self.simulation.time
        self.get_logger().info(f"tracking a trajectory of {len(msg.points)} points over {reference.duration:.3f} s")

    def _reference(self, msg: JointTrajectory) -> TrajectoryReference:
        points = msg.points
        velocities = [p.velocities for p in points] if points and all(len(p.velocities) for p in points) else None
        efforts = [p.effort for p in points] if points and all(len(p.effort) for p in points) else None
        return TrajectoryReference.from_message_fields(
            self.joints, msg.joint_names, [duration_seconds(p.time_from_start) for p in points],
            [p.positions for p in points], velocities, current=self.simulation.q, efforts=efforts)

    # ------------------------------------------------------------------------------------------ the action

    async def execute_goal(self, handle):
        """Start the goal, wait (without blocking the executor) for the tick that decides it, report it."""
        try:
            active = self._start_goal(handle)
        except JointNamesError as error:
            handle.abort()
            return _result(ErrorCode.INVALID_JOINTS, str(error))
        except InputError as error:
            handle.abort()
            return _result(ErrorCode.OLD_HEADER_TIMESTAMP if "header.stamp" in str(error) else ErrorCode.INVALID_GOAL,
                           str(error))
        outcome = await active.done
        if active.canceled:
            handle.canceled()
        elif outcome.code == ErrorCode.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return _result(outcome.code, outcome.message)

    def _start_goal(self, handle) -> ActiveGoal:
        goal = handle.request
        if goal.multi_dof_trajectory.points or goal.multi_dof_trajectory.joint_names:
            raise InputError("multi_dof_trajectory: this robot has no multi-DOF joints; use trajectory")
        if goal.component_path_tolerance or goal.component_goal_tolerance:
            raise InputError("component_path_tolerance/component_goal_tolerance: for multi-DOF joints, which this "
                             "robot does not have")
        reference = self._reference(goal.trajectory)

        def tolerances(items):
            return [JointTolerance(t.name, t.position, t.velocity) for t in items]

        limits = resolve_tolerances(self.joints, self.default_tolerances, tolerances(goal.path_tolerance),
                                    tolerances(goal.goal_tolerance), duration_seconds(goal.goal_time_tolerance))
        now = self.simulation.time
        stamp = duration_seconds(goal.trajectory.header.stamp)
        start = stamp if stamp > 0.0 else now
        if start + reference.duration < now:
            raise InputError(f"trajectory.header.stamp: the trajectory ended at t = {start + reference.duration:.3f} s,"
                             f" before the simulated time now ({now:.3f} s)")
        active = ActiveGoal(handle, TrajectoryExecution(self.joints, reference, start, limits), Future())
        self._end_goal(Outcome(ErrorCode.INVALID_GOAL, "preempted by a newer goal"))
        self.active, self.trajectory, self.trajectory_start = active, reference, start
        self.get_logger().info(f"executing a goal of {len(goal.trajectory.points)} points over "
                               f"{reference.duration:.3f} s")
        return active

    def on_cancel(self, handle) -> CancelResponse:
        active = self.active
        if active is not None and active.handle is handle:
            self._hold_position()
            self._end_goal(Outcome(ErrorCode.SUCCESSFUL, f"canceled at t = {self.simulation.time:.3f} s; holding "
                                                         "the position reached"), canceled=True)
        return CancelResponse.ACCEPT

    def _end_goal(self, outcome: Outcome, canceled: bool = False) -> None:
        if self.active is not None:
            self.active.finish(outcome, canceled)
            self.active = None

    def _hold_position(self) -> None:
        self.trajectory = TrajectoryReference(np.zeros(1), self.simulation.q[None, :].copy(), None)
        self.trajectory_start = self.simulation.time

    def _failed_result(self, reason: str):
        return _result(ErrorCode.INVALID_GOAL, reason)

    def _update_goal(self, stamp) -> None:
        """Feedback of the running goal, and its outcome once the tolerances decide it."""
        active = self.active
        if active is None:
            return
        sim = self.simulation
        elapsed = sim.time - active.execution.start_time
        desired = active.execution.reference.sample(elapsed)
        feedback = FollowJointTrajectory.Feedback(joint_names=list(self.joints))
        feedback.header.stamp = stamp
        sec, nanosec = seconds_to_duration_fields(max(elapsed, 0.0), "feedback time_from_start")
        for field, (positions, velocities) in (("desired", (desired.q, desired.qd)), ("actual", (sim.q, sim.qd)),
                                               ("error", (desired.q - sim.q, desired.qd - sim.qd))):
            point = JointTrajectoryPoint(positions=positions.tolist(), velocities=velocities.tolist())
            point.time_from_start.sec, point.time_from_start.nanosec = sec, nanosec
            setattr(feedback, field, point)
        feedback.desired.accelerations = desired.qdd.tolist()
        feedback.actual.effort = sim.tau.tolist()
        active.handle.publish_feedback(feedback)
        outcome = active.execution.check(sim.time, sim.q, sim.qd)
        if outcome is not None:
            self.get_logger().info(f"goal ended: {outcome.code.name}: {outcome.message}")
            if outcome.code != ErrorCode.SUCCESSFUL:
                self._hold_position()
            self._end_goal(outcome)

    # ------------------------------------------------------------------------------------------ simulation

    def torques(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The generalised forces held over the step starting at simulated time t, saturated at the limits."""
        if self.trajectory is None:
            tau = saturate(self.effort, self.effort_limits)
        else:
            reference = self.trajectory.sample(t - self.trajectory_start)
            tau = tracking_torques(self.system, q, qd, reference, self.gains["kp"], self.gains["kd"],
                                   self.effort_limits)
        saturated = np.flatnonzero(np.isfinite(self.effort_limits) & (np.abs(tau) >= self.effort_limits))
        if saturated.size:
            self.saturation_log.warning("saturated", f"effort limits active on {[self.joints[i] for i in saturated]}")
        return tau

    @property
    def world_time(self) -> float:
        return self.simulation.time

    @world_time.setter
    def world_time(self, seconds: float) -> None:
        self.simulation.time = seconds

    def advance_world(self, steps: int) -> None:
        # commanded efforts are held over the tick's steps (the simulation then takes them in compiled runs); a
        # tracked trajectory's torques depend on each step's state
        tracking = self.trajectory is not None
        self.simulation.step(steps, self.torques if tracking else self.torques(self.world_time, None, None))

    def on_step_failed(self) -> None:
        self.effort = np.zeros(len(self.joints))
        self.trajectory = None
        self._end_goal(Outcome(ErrorCode.INVALID_GOAL, f"the simulation step failed at t = "
                                                       f"{self.simulation.time:.3f} s"))

    def reset_world(self) -> None:
        self.simulation.reset(self.q0, self.qd0)
        self.energy0 = self.simulation.energy()

    def set_world_state(self, request) -> None:
        if request.set_base:
            raise InputError("set_base: this robot's base is fixed")
        q, qd = merged_joint_state(self.joints, request.joint_state, self.simulation.q, self.simulation.qd)
        self.on_step_failed()
        self.simulation.reset(q, qd)
        self.energy0 = self.simulation.energy()

    def publish_state(self, stamp) -> None:
        simulation = self.simulation
        self.joint_pub.publish(joint_state_msg(stamp, self.joints, simulation.q, simulation.qd, simulation.tau))
        self.energy_pub.publish(Float64(data=float(simulation.energy())))
        self._update_goal(stamp)

    def moving_transforms(self):
        return joint_transforms(self.model, self.simulation.q)

    def static_transforms(self):
        return fixed_transforms(self.model)

    def diagnostic_values(self) -> dict[str, float]:
        sim = self.simulation
        energy = sim.energy()
        iterations, time = self._diagnosed
        steps = round((sim.time - time) / sim.time_step)
        self._diagnosed = (sim.newton_iterations, sim.time)
        return {"energy_J": energy, "energy_change_since_start_J": energy - self.energy0,
                "energy_removed_by_joint_stops_J": sim.stop_energy,
                "newton_iterations_per_step": (sim.newton_iterations - iterations) / steps if steps else 0.0}


def _result(code: ErrorCode, message: str):
    return FollowJointTrajectory.Result(error_code=int(code), error_string=message)


main = node_main(DiscreteRobotNode)
