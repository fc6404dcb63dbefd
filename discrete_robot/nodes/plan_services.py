"""trajectory_planner_node's plan services: a plan and its predicted execution in the response, and ``execute``:
the plan sent to ``<controller>/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory) and measured.

``retime_trajectory`` (RetimeTrajectory) retimes a stack's JointTrajectory for minimum time under the model's
limits (planning.retime through TrajectoryPlanner.retime); ``plan_trajectory`` (PlanTrajectory) plans from
waypoints. Both answer the same fields (the trajectory, the duration, the prediction per
joint, the measured execution), so one translation fills both. The measurement is the prediction's
(discrete_robot.planning.prediction.measure_execution) on the joint_states the node hears while the goal runs,
stamped in simulated time: the execution begins where the controller's first feedback says it did
(header.stamp − actual.time_from_start), and the samples are taken until one after the last point meets the
goal tolerance (or a bounded wait after the result).
"""

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from discrete_robot_interfaces.srv import RetimeTrajectory
from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from sensor_msgs.msg import JointState

from discrete_robot.nodes.conversions import duration_seconds, seconds_to_duration_fields
from discrete_robot.nodes.guarded import refuse
from discrete_robot.nodes.plan_messages import trajectory_msg
from discrete_robot.planning.planner import ArmState, PlannedTrajectory, TrajectoryPlanner
from discrete_robot.planning.prediction import STOPPED_VELOCITY_TOLERANCE, at_goal, measure_execution

RETIME_SERVICE = "retime_trajectory"
#: wall-clock seconds to wait for the FollowJointTrajectory server to be discovered (seconds on a loaded machine)
SERVER_WAIT_S = 10.0
#: wall-clock seconds to wait, after the result, for the joint state in which the goal is met
SETTLED_WAIT_S = 2.0


def retimed(planner: TrajectoryPlanner, request: RetimeTrajectory.Request) -> tuple[PlannedTrajectory, str]:
    """The plan answering ``request`` (RetimeTrajectory.srv) and its summary line; DiscreteRobotError naming the
    field for a malformed request."""
    # 0 means "unset" in a ROS request: the automatic effort margin, and the full velocity limits
    velocity_scale = request.velocity_scale if request.velocity_scale != 0.0 else 1.0
    plan = planner.retime([point.positions for point in request.trajectory.points], request.trajectory.joint_names,
                          request.effort_scale, velocity_scale)
    return plan, (f"retime: {plan.duration:.4f} s, {len(plan.t)} points, effort scale "
                  f"{plan.details['effort_scale']}")


def fill_plan_response(response, plan: PlannedTrajectory, message: str):
    """``response`` (PlanTrajectory or RetimeTrajectory) answering ``plan``: success, ``message`` with the
    prediction's line, the trajectory, the duration and the predicted fields."""
    response.success = True
    response.trajectory = trajectory_msg(plan)
    response.duration = plan.duration
    response.message = message
    predicted = plan.predicted
    if predicted is not None:
        response.message += f"; {predicted.message()}"
        response.joint_names = list(predicted.joint_names)
        response.predicted_max_tracking_error = predicted.max_tracking_error.tolist()
        response.predicted_peak_effort_fraction = predicted.peak_effort_fraction.tolist()
        response.predicted_end_lag = _lag_field(predicted.end_lag)
        response.goal_tolerance = predicted.goal_tolerance.tolist()
        response.predicted_meets_tolerances = predicted.meets_tolerances
    return response


def _lag_field(lag: float) -> float:
    """An end lag (s) as the services answer it: −1 for a goal tolerance not met (a response's numbers are finite)."""
    return lag if np.isfinite(lag) else -1.0


class _Recording:
    """The joint states of one execution: (t, q, q̇) in simulated seconds, model order; ``settled`` completes
    when a sample at or after ``goal_time`` meets the goal (known once the execution's start is)."""

    def __init__(self, plan: PlannedTrajectory):
        self.plan = plan
        self.samples: list[tuple[float, np.ndarray, np.ndarray]] = []
        self.start: float | None = None
        self.settled = Future()

    def add(self, stamp: float, state: ArmState) -> None:
        self.samples.append((stamp, state.positions, state.velocities))
        plan, predicted = self.plan, self.plan.predicted
        if (self.start is not None and stamp - self.start >= plan.duration and predicted is not None
                and at_goal(state.positions, state.velocities, plan.positions[-1], predicted.goal_tolerance,
                            STOPPED_VELOCITY_TOLERANCE)):
            self.settled.done() or self.settled.set_result(True)


class PlanExecutor:
    """Executes plans through ``action`` for ``node`` (a GuardedNode whose ``values`` hold goal_time_tolerance and
    execution_timeout) and measures them on the joint states handed to :meth:`on_joint_states`."""

    def __init__(self, node, action: str):
        self.node, self.action = node, action
        # the action's responses must be served while the service callback awaits them
        self.client = ActionClient(node, FollowJointTrajectory, action, callback_group=ReentrantCallbackGroup())
        self._recordings: list[_Recording] = []

    def on_joint_states(self, msg: JointState, state: ArmState) -> None:
        stamp = duration_seconds(msg.header.stamp)
        for recording in list(self._recordings):
            recording.add(stamp, state)

    async def execute(self, response, plan: PlannedTrajectory):
        """Send ``plan`` (answered in ``response``) as a goal and fill in its outcome and measurement."""
        values, action = self.node.values, self.action
        if not self.client.wait_for_server(timeout_sec=SERVER_WAIT_S):
            return refuse(response, f"execute: no FollowJointTrajectory server at {action}")
        sec, nanosec = seconds_to_duration_fields(values["goal_time_tolerance"], "goal_time_tolerance")
        goal = FollowJointTrajectory.Goal(trajectory=response.trajectory,
                                          goal_time_tolerance=Duration(sec=sec, nanosec=nanosec))
        recording = _Recording(plan)

        def on_feedback(message) -> None:
            if recording.start is None:
                feedback = message.feedback
                recording.start = (duration_seconds(feedback.header.stamp)
                                   - duration_seconds(feedback.actual.time_from_start))

        self._recordings.append(recording)
        try:
            handle = await self.client.send_goal_async(goal, feedback_callback=on_feedback)
            if not handle.accepted:
                return refuse(response, f"execute: {action} rejected the goal")
            result = await self.node.wall_clock_result(handle.get_result_async(),
                                                       response.duration + values["execution_timeout"])
            if result is None:
                await handle.cancel_goal_async()
                return refuse(response, f"execute: no result from {action} within {response.duration:.3g} s + "
                                        f"execution_timeout = {values['execution_timeout']:g} s; goal canceled")
            if result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL:
                await self.node.wall_clock_result(recording.settled, SETTLED_WAIT_S)
        finally:
            self._recordings.remove(recording)
        return self._outcome(response, result.result, recording)

    def _outcome(self, response, outcome, recording: _Recording):
        response.execution_error_code = outcome.error_code
        if recording.start is not None:
            sec, nanosec = seconds_to_duration_fields(recording.start, "execution start")
            response.trajectory.header.stamp.sec, response.trajectory.header.stamp.nanosec = sec, nanosec
            self._measure(response, recording)
        if outcome.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
            return refuse(response, f"execute: {self.action} failed (error_code {outcome.error_code}): "
                                    f"{outcome.error_string}")
        response.message += f"; executed: {outcome.error_string or 'SUCCESSFUL'}"
        return response

    @staticmethod
    def _measure(response, recording: _Recording) -> None:
        plan, predicted = recording.plan, recording.plan.predicted
        samples = [s for s in recording.samples if s[0] >= recording.start]
        if predicted is None or not samples:
            return
        t, q, qd = zip(*samples, strict=True)
        measured = measure_execution(plan.t, plan.positions, plan.velocities, plan.accelerations,
                                     np.asarray(t) - recording.start, np.array(q), np.array(qd),
                                     predicted.goal_tolerance)
        response.measured_max_tracking_error = measured.max_tracking_error.tolist()
        response.measured_end_lag = _lag_field(measured.end_lag)
        response.message += f"; {measured.against(predicted)}"
