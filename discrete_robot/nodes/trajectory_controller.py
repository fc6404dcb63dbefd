"""joint_trajectory_controller's ROS interface on a simulator node: one controller per set of joints.

A simulator creates a :class:`TrajectoryControllerEndpoints` named like the controller (``<name>/...``, as
ros2_control names a controller's ``~/`` endpoints) and calls :meth:`~TrajectoryControllerEndpoints.tick`
from its publish hook and :meth:`~TrajectoryControllerEndpoints.sample` from its control law; the goal life
cycle is discrete_robot.control.joint_trajectory_controller's. Endpoints, as JTC's (its .cpp, kilted):

- action ``<name>/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory): goals checked in the goal
  callback and REJECTED with the reason logged; feedback (desired, actual, error, ``index``) at
  ``action_monitor_rate`` Hz of wall time; goal, cancel and result services with keep-all queues (no request
  is dropped under a burst) and results kept ``RESULT_TIMEOUT_S`` (discrete_robot.nodes.qos: 30 s, not rcl's
  15 minutes, in which a server's memory grows ~4 KB per goal);
- topic ``<name>/joint_trajectory`` (trajectory_msgs/JointTrajectory): replaces the trajectory followed; a running
  goal stays active and ends on it;
- topic ``<name>/controller_state`` (control_msgs/JointTrajectoryControllerState) every tick, with
  ``speed_scaling_factor`` 1.0 (no speed scaling here);
- service ``<name>/query_state`` (control_msgs/QueryTrajectoryState): the trajectory's desired state at a time.

The parameters are JTC's (discrete_robot.nodes.jtc_parameters); the messages are built in
discrete_robot.nodes.jtc_messages.
"""

from collections.abc import Callable, Sequence

import numpy as np
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from control_msgs.srv import QueryTrajectoryState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.clock import Clock, ClockType
from rclpy.parameter import Parameter
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory

from discrete_robot.control.joint_trajectory_controller import (
    ControllerSettings,
    Ended,
    ErrorCode,
    JointTrajectoryController,
    Outcome,
    effective_cmd_timeout,
    effective_deceleration,
    goal_tolerances,
    seconds,
    validate_trajectory,
)
from discrete_robot.control.trajectory import Reference
from discrete_robot.errors import InputError
from discrete_robot.nodes.common import ACTION_SERVER, STATE_QOS
from discrete_robot.nodes.jtc_messages import controller_state_msg, feedback_msg, goal_result, refusal_code
from discrete_robot.nodes.jtc_parameters import controller_settings
from discrete_robot.validation import printable


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
        self.enabled = True                         # active, as controller_manager switches it
        self.goals: dict[int, Future] = {}          # by id() of the goal handle (not hashable)
        self.feedback: FollowJointTrajectory.Feedback | None = None
        action = f"{name}/follow_joint_trajectory"
        self.action_server = ActionServer(
            node, FollowJointTrajectory, action,
            node.guard(f"action {action}", self.execute,
                       lambda reason: goal_result(ErrorCode.INVALID_GOAL, reason)),
            goal_callback=node.guard(f"action {action} goal", self.on_goal, lambda _: GoalResponse.REJECT),
            cancel_callback=node.guard(f"action {action} cancel", self.on_cancel, lambda _: CancelResponse.REJECT),
            **ACTION_SERVER)
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
        """Accept a goal JTC would accept (cpp 1397-1417; an inactive controller none); the reason of a refusal is
        logged."""
        try:
            if not self.enabled:
                raise InputError(f"controller {self.name} is inactive")
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
            return goal_result(refusal_code(error), printable(error))
        tolerances, problem = goal_tolerances(self.core.defaults, self.joints, goal.path_tolerance,
                                              goal.goal_tolerance, seconds(goal.goal_time_tolerance))
        if problem:
            self.node.get_logger().error(f"{self.action}: {printable(problem)}")
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
        return goal_result(ended.outcome.code, ended.outcome.message)

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
        self.state_pub.publish(controller_state_msg(stamp, self.joints, update, q, qd, tau))
        if self.core.goal is not None:
            self.feedback = feedback_msg(stamp, self.joints, update, q, qd, tau)

    def publish_feedback(self) -> None:
        """The running goal's latest feedback, at action_monitor_rate (JTC's goal_handle_timer, cpp 1484-1487)."""
        feedback, self.feedback = self.feedback, None
        if feedback is None:
            return
        if self.core.goal is not None:
            self.core.goal.publish_feedback(feedback)

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
