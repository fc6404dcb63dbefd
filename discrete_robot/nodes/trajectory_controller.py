"""joint_trajectory_controller's ROS interface on a simulator node: one controller per set of joints.

A simulator creates a :class:`TrajectoryControllerEndpoints` named like the controller (``<name>/...``, as
ros2_control names a controller's ``~/`` endpoints) and calls :meth:`~TrajectoryControllerEndpoints.tick`
from its publish hook and :meth:`~TrajectoryControllerEndpoints.sample` from its control law; the goal life
cycle is discrete_robot.control.joint_trajectory_controller's. Endpoints, as JTC's (its .cpp, kilted):

- action ``<name>/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory): goals checked in the goal
  callback and REJECTED with the reason logged; feedback (desired, actual, error, ``index``) at
  ``action_monitor_rate`` Hz of wall time; goal, cancel and result services with keep-all queues (no request
  is dropped under a burst) and results kept 15 minutes (rcl_action's default, which rclcpp servers use);
- topic ``<name>/joint_trajectory`` (trajectory_msgs/JointTrajectory): replaces the trajectory followed; a running
  goal stays active and ends on it;
- topic ``<name>/controller_state`` (control_msgs/JointTrajectoryControllerState) every tick, with
  ``speed_scaling_factor`` 1.0 (no speed scaling here);
- service ``<name>/query_state`` (control_msgs/QueryTrajectoryState): the trajectory's desired state at a time.

The parameters carry JTC's names and defaults (:data:`CONTROLLER_PARAMETERS`, plus ``constraints.<joint>.
trajectory`` and ``.goal`` per joint); ``controllers_file`` names a ros2_controllers.yaml (a MoveIt config's)
whose ``<name>`` section supplies them where the node's own parameters do not.
"""

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from control_msgs.srv import QueryTrajectoryState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.clock import Clock, ClockType
from rclpy.parameter import Parameter
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.control.joint_trajectory_controller import (
    ControllerSettings,
    Ended,
    ErrorCode,
    JointTrajectoryController,
    Outcome,
    Update,
    effective_cmd_timeout,
    effective_deceleration,
    goal_tolerances,
    seconds,
    validate_trajectory,
)
from discrete_robot.control.trajectory import Interpolation, JointNamesError, Reference
from discrete_robot.errors import InputError
from discrete_robot.nodes.common import (
    SERVICE_QOS,
    STATE_QOS,
    ParameterSpec,
    StartupError,
    declare_parameters,
    non_negative,
    one_of,
    seconds_to_duration_fields,
)

#: how long a finished goal's result stays available, s (rcl_action_server_get_default_options: 15 min)
RESULT_TIMEOUT_S = 900

CONTROLLERS_FILE = ParameterSpec("controllers_file", "", "a ros2_controllers.yaml (e.g. a MoveIt config's): "
                                                          "the JTC parameters of its <controller_name> section "
                                                          "where this node sets none; empty = none",
                                 read_only=True)
#: JTC's ``joints`` (yaml 2-11: read-only, unique); empty here means "from the model" (controller_joints)
JOINTS = ParameterSpec("joints", [], "the controller's joints (JTC's joints); empty = controllers_file's, else "
                                     "those the URDF's <ros2_control> tags give a command interface, else every "
                                     "joint; the others hold where they are while the controller drives",
                       type=Parameter.Type.STRING_ARRAY, read_only=True)
#: JTC's parameters, same names and defaults (joint_trajectory_controller_parameters.yaml 75-127, 203-236)
CONTROLLER_PARAMETERS = [
    ParameterSpec("constraints.goal_time", 0.0, "time after the last point to come within the goal tolerances, s "
                                                "(0 = no limit; a goal's goal_time_tolerance 0)", check=non_negative,
                  value_range=(0.0, 1e6)),
    ParameterSpec("constraints.stopped_velocity_tolerance", 0.01, "goal velocity tolerance of every joint, rad/s "
                                                                  "or m/s (a goal's 0)", check=non_negative,
                  value_range=(0.0, 1e6)),
    ParameterSpec("allow_partial_joints_goal", False, "accept goals naming only some joints (the rest hold)"),
    ParameterSpec("allow_nonzero_velocity_at_trajectory_end", False, "accept trajectories whose last point moves"),
    ParameterSpec("allow_integration_in_goal_trajectories", False, "accept points without positions (or "
                                                                   "velocities): integrated from the velocities "
                                                                   "and accelerations"),
    ParameterSpec("constraints.decelerate_on_cancel", False, "on a cancel or an abort, stop at each joint's "
                                                             "max_deceleration_on_cancel instead of holding where "
                                                             "the joints are (needs every joint's deceleration > 0 "
                                                             "and URDF velocity limit)", read_only=True),
    ParameterSpec("speed_scaling.initial_scaling_factor", 1.0, "JTC's; with an effort command interface JTC "
                                                               "keeps the factor at 1.0 (and warns when this is "
                                                               "not 1.0), as this node does", check=non_negative,
                  value_range=(0.0, 1e6), read_only=True),
    ParameterSpec("cmd_timeout", 0.0, "s after a trajectory's last point before the controller holds where the "
                                      "robot is (a running goal then succeeds, as in JTC); 0 = off; must exceed "
                                      "constraints.goal_time, else off; read when the controller starts",
                  check=non_negative, value_range=(0.0, 1e6), read_only=True),
    ParameterSpec("action_monitor_rate", 20.0, "rate of the action's feedback, Hz (wall time)",
                  value_range=(0.1, 1000.0), read_only=True),
    ParameterSpec("interpolation_method", Interpolation.SPLINES.value, "splines (linear, cubic or quintic as the "
                                                                       "points carry positions, velocities, "
                                                                       "accelerations) or none",
                  check=one_of(*(m.value for m in Interpolation)), read_only=True),
]
#: per joint, JTC's constraints.<joint>.trajectory and .goal (position tolerances, rad or m, 0 = unchecked) and
#: .max_deceleration_on_cancel
JOINT_CONSTRAINTS = {"trajectory": "path position tolerance of {joint} while moving, rad or m (0 = unchecked)",
                     "goal": "goal position tolerance of {joint}, rad or m (0 = unchecked)",
                     "max_deceleration_on_cancel": "deceleration of {joint} when it stops with "
                                                   "constraints.decelerate_on_cancel, rad/s² or m/s²"}


#: per joint, JTC's gains.<joint>.p and .d (yaml 136-152, default 0.0); here the gains of the computed-torque law
GAINS = {"p": "position gain of {joint}, 1/s² (the computed-torque law's kp for it: ë + d ė + p e = 0; 0 = the "
              "node's kp)",
         "d": "velocity gain of {joint}, 1/s (the computed-torque law's kd for it; 0 = the node's kd)"}


def gain_specs(joints: Sequence[str]) -> list[ParameterSpec]:
    """``gains.<joint>.p`` and ``.d`` for each joint (0.0: the node's ``kp``, ``kd``)."""
    return [ParameterSpec(f"gains.{joint}.{kind}", 0.0, description.format(joint=joint), check=non_negative,
                          value_range=(0.0, 1e6))
            for joint in joints for kind, description in GAINS.items()]


def joint_constraint_specs(joints: Sequence[str]) -> list[ParameterSpec]:
    """``constraints.<joint>.trajectory`` and ``.goal`` for each joint (0.0: unchecked)."""
    return [ParameterSpec(f"constraints.{joint}.{kind}", 0.0, description.format(joint=joint), check=non_negative,
                          value_range=(0.0, 1e6))
            for joint in joints for kind, description in JOINT_CONSTRAINTS.items()]


def _flatten(section: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in section.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def controllers_file_values(path: str, name: str, joints: Sequence[str] | None = None) -> dict:
    """The ``<name>.ros__parameters`` of a ros2_controllers.yaml, flattened (``constraints.goal_time``, ...);
    StartupError when the file cannot be read, has no such section, or lists other joints than ``joints`` (when
    given)."""
    try:
        document = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise StartupError(f"controllers_file: cannot read {path}: {error}") from None
    section = document.get(name, {}) if isinstance(document, dict) else {}
    if not isinstance(section, dict) or "ros__parameters" not in section:
        sections = [key for key, value in document.items() if isinstance(value, dict)] if isinstance(
            document, dict) else []
        raise StartupError(f"controllers_file: {path} has no '{name}: ros__parameters:' section (it has {sections});"
                           f" set controller_name to the controller's name")
    values = _flatten(section["ros__parameters"] or {})
    listed = values.get("joints")
    if joints is not None and listed is not None and sorted(listed) != sorted(joints):
        raise StartupError(f"controllers_file: {path}: {name}.joints {listed} are not the controller's joints "
                           f"{list(joints)} (set joints, or the URDF's <ros2_control> tags, to the same)")
    return values


def controllers_file_joints(path: str, name: str) -> list[str]:
    """The ``<name>.joints`` of a ros2_controllers.yaml: [] when ``path`` is empty or the section lists none."""
    return list(controllers_file_values(path, name).get("joints") or []) if path else []


def declare_controller_parameters(node, name: str, joints: Sequence[str], controllers_file: str,
                                  prefix: str = "", gains: bool = False) -> dict:
    """Declare the controller's parameters (``prefix`` before each name; with ``gains``, ``gains.<joint>.p`` and
    ``.d`` too) with ``controllers_file``'s values as their defaults; their values by unprefixed name."""
    from_file = controllers_file_values(controllers_file, name, joints) if controllers_file else {}
    specs = []
    for spec in [*CONTROLLER_PARAMETERS, *joint_constraint_specs(joints), *(gain_specs(joints) if gains else ())]:
        default = from_file.get(spec.name, spec.default)
        if isinstance(spec.default, float) and isinstance(default, int) and not isinstance(default, bool):
            default = float(default)         # YAML's 1 for a double parameter
        specs.append(replace(spec, name=prefix + spec.name, default=default))
    values = declare_parameters(node, specs)
    return {key[len(prefix):]: value for key, value in values.items()}


def controller_settings(joints: Sequence[str], values: dict, wraparound: np.ndarray | None = None,
                        cmd_timeout: float = 0.0, deceleration: np.ndarray | None = None,
                        update_period: float = 0.01) -> ControllerSettings:
    """ControllerSettings from the parameters' values by name; ``wraparound``: the continuous joints (bool each);
    ``cmd_timeout`` and ``deceleration`` as they took effect when the controller started (effective_cmd_timeout,
    effective_deceleration); ``update_period``: s between the controller's updates."""
    return ControllerSettings(
        tuple(joints), np.array([values[f"constraints.{j}.trajectory"] for j in joints], dtype=float),
        np.array([values[f"constraints.{j}.goal"] for j in joints], dtype=float),
        values["constraints.goal_time"], values["constraints.stopped_velocity_tolerance"],
        values["allow_partial_joints_goal"], values["allow_nonzero_velocity_at_trajectory_end"],
        Interpolation(values["interpolation_method"]), values["allow_integration_in_goal_trajectories"],
        cmd_timeout=cmd_timeout, wraparound=wraparound, deceleration=deceleration, update_period=update_period)


def _result(code: ErrorCode, message: str):
    return FollowJointTrajectory.Result(error_code=int(code), error_string=message)


def _code(error: InputError) -> ErrorCode:
    if isinstance(error, JointNamesError):
        return ErrorCode.INVALID_JOINTS
    return ErrorCode.OLD_HEADER_TIMESTAMP if "header.stamp" in str(error) else ErrorCode.INVALID_GOAL


def _point(positions, velocities=None, accelerations=None, effort=None, time_from_start: float = 0.0):
    point = JointTrajectoryPoint(positions=positions.tolist())
    for name, values in (("velocities", velocities), ("accelerations", accelerations), ("effort", effort)):
        if values is not None:
            setattr(point, name, values.tolist())
    point.time_from_start.sec, point.time_from_start.nanosec = seconds_to_duration_fields(
        max(time_from_start, 0.0), "time_from_start")
    return point


class TrajectoryControllerEndpoints:
    """One joint_trajectory_controller on ``node`` for ``joints``: its endpoints under ``<name>/`` and the goal
    life cycle. ``state()`` gives (simulated time s, positions, velocities) in ``joints`` order;
    ``topic_aliases`` are further topics that take trajectories (the node's older names); ``wraparound`` marks the
    continuous joints, whose errors are shortest angles (JTC's angle wraparound); ``velocity_limits`` (joints order,
    inf = none) enable decelerate_on_cancel as the URDF's do in JTC; ``update_period``: s between ``tick`` calls."""

    def __init__(self, node, name: str, joints: Sequence[str], values: dict,
                 state: Callable[[], tuple[float, np.ndarray, np.ndarray]], topic_aliases: Sequence[str] = (),
                 prefix: str = "", wraparound: np.ndarray | None = None,
                 velocity_limits: np.ndarray | None = None, update_period: float = 0.01):
        self.node, self.name, self.joints, self.state, self.prefix = node, name, list(joints), state, prefix
        self.values, self.wraparound = dict(values), wraparound
        # JTC reads cmd_timeout on activation only (cpp 1227-1246), decelerate_on_cancel on configuration (136-172)
        self.cmd_timeout, problem = effective_cmd_timeout(values["cmd_timeout"], values["constraints.goal_time"])
        self.deceleration, unusable = effective_deceleration(
            values["constraints.decelerate_on_cancel"],
            np.array([values[f"constraints.{joint}.max_deceleration_on_cancel"] for joint in self.joints]),
            velocity_limits, self.joints)
        self.update_period = update_period
        # cpp 1071-1092: speed scaling runs only without velocity, acceleration and effort command interfaces
        scaling = None if values["speed_scaling.initial_scaling_factor"] == 1.0 else (
            "speed scaling is currently only supported for position interfaces; this controller commands efforts, "
            "so the scaling factor stays 1.0")
        for reason in (problem, unusable, scaling):
            if reason:
                node.get_logger().warning(f"{name}: {reason}")
        self.core = JointTrajectoryController(self._settings())
        self.goals: dict[int, Future] = {}          # by id() of the goal handle (not hashable)
        self.feedback: FollowJointTrajectory.Feedback | None = None
        action = f"{name}/follow_joint_trajectory"
        self.action_server = ActionServer(
            node, FollowJointTrajectory, action,
            node.guard(f"action {action}", self.execute, lambda reason: _result(ErrorCode.INVALID_GOAL, reason)),
            goal_callback=node.guard(f"action {action} goal", self.on_goal, lambda _: GoalResponse.REJECT),
            cancel_callback=node.guard(f"action {action} cancel", self.on_cancel, lambda _: CancelResponse.REJECT),
            goal_service_qos_profile=SERVICE_QOS, result_service_qos_profile=SERVICE_QOS,
            cancel_service_qos_profile=SERVICE_QOS, result_timeout=RESULT_TIMEOUT_S)
        self.state_pub = node.create_publisher(JointTrajectoryControllerState, f"{name}/controller_state",
                                               STATE_QOS)
        for topic in (f"{name}/joint_trajectory", *topic_aliases):
            node.create_subscription(JointTrajectory, topic, self.on_trajectory, STATE_QOS)
        node.create_service(QueryTrajectoryState, f"{name}/query_state", self.on_query)
        node.create_timer(1.0 / values["action_monitor_rate"], self.publish_feedback,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        node.add_post_set_parameters_callback(self.on_parameters_set)
        self.action = action

    # ------------------------------------------------------------------------------------------ parameters

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        """JTC re-reads its dynamic parameters each update (cpp 263-265): new defaults for the next goals."""
        changed = {p.name[len(self.prefix):]: p.value for p in parameters if p.name.startswith(self.prefix)
                   and p.name[len(self.prefix):] in self.values}
        if changed:
            self.values.update(changed)
            self.core.configure(self._settings())

    def _settings(self) -> ControllerSettings:
        return controller_settings(self.joints, self.values, self.wraparound, self.cmd_timeout, self.deceleration,
                                   self.update_period)

    # ------------------------------------------------------------------------------------------ goals

    def _check(self, goal, now: float):
        if goal.multi_dof_trajectory.points or goal.multi_dof_trajectory.joint_names:
            raise InputError("multi_dof_trajectory: this controller has no multi-DOF joints; use trajectory")
        return validate_trajectory(self.core.settings, goal.trajectory, now)

    def on_goal(self, goal) -> GoalResponse:
        """Accept a goal JTC would accept (cpp 1397-1417); the reason of a refusal is logged."""
        try:
            self._check(goal, self.state()[0])
        except InputError as error:
            self.node.refusals.warning(str(error), f"{self.action}: goal rejected: {error}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    async def execute(self, handle):
        """Follow the accepted goal (preempting the running one) and report how it ended."""
        now, q, qd = self.state()
        goal = handle.request
        try:
            trajectory = self._check(goal, now)
        except InputError as error:        # time passed since the goal callback: the trajectory is now over
            handle.abort()
            return _result(_code(error), str(error))
        tolerances, problem = goal_tolerances(self.core.defaults, self.joints, goal.path_tolerance,
                                              goal.goal_tolerance, seconds(goal.goal_time_tolerance))
        if problem:
            self.node.get_logger().error(f"{self.action}: {problem}")
        done = Future()
        self.goals[id(handle)] = done
        self._report(self.core.follow(trajectory, now, q, qd, goal=handle, tolerances=tolerances))
        self.node.get_logger().info(f"{self.action}: executing a goal of {len(goal.trajectory.points)} points "
                                    f"until t = {self.core.reference.end:.3f} s")
        ended: Ended = await done
        if ended.canceled:
            handle.canceled()
        elif ended.outcome.code == ErrorCode.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return _result(ended.outcome.code, ended.outcome.message)

    def on_cancel(self, handle) -> CancelResponse:
        now, q, qd = self.state()
        self._report(self.core.cancel(handle, now, q, qd))
        return CancelResponse.ACCEPT

    def on_trajectory(self, msg: JointTrajectory) -> None:
        """A trajectory on the topic: followed as JTC does (cpp 1381-1395); a running goal stays active and is
        checked against it."""
        now, q, qd = self.state()
        try:
            trajectory = validate_trajectory(self.core.settings, msg, now)
        except InputError as error:
            self.node.refusals.warning(str(error), f"{self.name}/joint_trajectory: ignored: {error}")
            return
        self.core.follow_message(trajectory, now, q, qd)

    def _report(self, ended: Ended | None) -> None:
        if ended is None:
            return
        done = self.goals.pop(id(ended.goal), None)
        message = f"{self.action}: goal ended: {ended.outcome.code.name}: {ended.outcome.message}"
        if ended.outcome.code == ErrorCode.SUCCESSFUL:
            self.node.get_logger().info(message)
        else:      # one call per severity: rclpy refuses a call site whose severity changes
            self.node.get_logger().warning(message)
        if done is not None and not done.done():
            done.set_result(ended)

    # ------------------------------------------------------------------------------------------ the simulator's side

    @property
    def active(self) -> bool:
        """Whether the controller drives the joints (a trajectory, a hold), rather than effort commands."""
        return self.core.reference is not None

    def gains(self, kp: float, kd: float) -> tuple[np.ndarray, np.ndarray]:
        """Per joint (``joints`` order), the computed-torque law's position and velocity gains, 1/s² and 1/s:
        ``gains.<joint>.p`` and ``.d`` where set (> 0), else ``kp`` and ``kd``."""
        p = np.array([self.values[f"gains.{joint}.p"] for joint in self.joints])
        d = np.array([self.values[f"gains.{joint}.d"] for joint in self.joints])
        return np.where(p > 0.0, p, kp), np.where(d > 0.0, d, kd)

    def sample(self, t: float) -> Reference | None:
        """The desired state at t; a continuous joint's within π of where it is (the law's error is the angle)."""
        if self.wraparound is None or not self.wraparound.any():
            return self.core.sample(t)
        return self.core.sample(t, self.state()[1])

    def hold(self) -> None:
        """Hold the joints where they are."""
        now, q, _ = self.state()
        self.core.hold(now, q)

    def release(self, reason: str) -> None:
        """Stop driving the joints (effort commands take over); the running goal ends (INVALID_GOAL, ``reason``)."""
        self._report(self.core.release(Outcome(ErrorCode.INVALID_GOAL, reason)))

    def tick(self, stamp, tau: np.ndarray) -> None:
        """The controller's update at the simulator's tick: tolerances, the goal's end, feedback and state."""
        now, q, qd = self.state()
        update = self.core.update(now, q, qd)
        if update is None:
            return
        self._report(update.ended)
        self._publish_state(stamp, update, q, qd, tau)
        if self.core.goal is not None:
            self.feedback = self._feedback(stamp, update, q, qd, tau)

    def _feedback(self, stamp, update: Update, q, qd, tau) -> FollowJointTrajectory.Feedback:
        desired, t = update.desired, update.time_from_start
        feedback = FollowJointTrajectory.Feedback(joint_names=self.joints, index=update.index)
        feedback.header.stamp = stamp
        feedback.desired = _point(desired.q, desired.qd, desired.qdd, desired.effort, t)
        feedback.actual = _point(q, qd, effort=tau, time_from_start=t)
        feedback.error = _point(update.position_error, update.velocity_error, time_from_start=t)
        return feedback

    def publish_feedback(self) -> None:
        """The running goal's latest feedback, at action_monitor_rate (JTC's goal_handle_timer, cpp 1484-1487)."""
        feedback, self.feedback = self.feedback, None
        if feedback is None:
            return
        if self.core.goal is not None:
            self.core.goal.publish_feedback(feedback)

    def _publish_state(self, stamp, update: Update, q, qd, tau) -> None:
        desired, t = update.desired, update.time_from_start
        msg = JointTrajectoryControllerState(joint_names=self.joints, speed_scaling_factor=1.0)
        msg.header.stamp = stamp
        msg.reference = _point(desired.q, desired.qd, desired.qdd, time_from_start=t)
        msg.feedback = _point(q, qd, time_from_start=t)
        msg.error = _point(update.position_error, update.velocity_error, time_from_start=t)
        msg.output = _point(np.empty(0), effort=tau)
        self.state_pub.publish(msg)

    def on_query(self, request, response):
        """The trajectory's desired state at request.time (cpp 755-799); success false with the reason else."""
        response.name = self.joints
        reason, desired = self.core.query(seconds(request.time))
        if desired is None:
            response.success, response.message = False, f"{self.name}/query_state: {reason}"
            return response
        response.success = True
        response.position, response.velocity, response.acceleration = (
            desired.q.tolist(), desired.qd.tolist(), desired.qdd.tolist())
        return response
