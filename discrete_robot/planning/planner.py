"""The planning service without ROS: validate a request against a robot model, plan, return a trajectory.

One request shape for the ``plan_trajectory`` service and anything else that plans for a robot model:
waypoints (first = start, last = goal) in the order of ``joint_names`` (empty = the model's order),
optional per-joint torque and velocity limits (empty = the model file's), a method and, for
``min_effort``, a duration. Every problem is reported as InputError (malformed request) or
InfeasibleError (no motion satisfies the limits) with a reason naming the joint or waypoint.

Planning from the arm's state. Given the arm's measured state (:class:`ArmState`), a request whose first
waypoint is omitted (``from_current_state``, or a single waypoint: the goal) starts at the measured
positions; a request that gives its first waypoint must give one within ``start_tolerance`` of them (so a
plan never starts where the arm is not). Plans start at rest, so an arm moving faster than
``rest_tolerance`` is refused either way.

The returned :class:`PlannedTrajectory` is in the model's joint order, with positions, velocities,
accelerations and efforts at every point: the effort at point k is the generalised force held from t_k to
t_{k+1}, and at the last point the torque that holds the arm at rest at the goal (∇V), so an executor
that keeps the last effort keeps the arm where it stopped.
"""

import dataclasses
import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.model.description import RobotModel
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.dmoc_sparse import CONSTRAINT_TOL, accurate_model, min_effort
from discrete_robot.planning.min_time import plan_min_time
from discrete_robot.planning.path import WaypointPath
from discrete_robot.planning.prediction import DEFAULT_GOAL_TOLERANCE, PredictedExecution, predict_execution
from discrete_robot.planning.retime import model_order, retime
from discrete_robot.validation import finite_scalar, finite_vector, positive_step, whole_number

LOGGER = logging.getLogger(__name__)


#: rad and rad/s: a min-effort replay always may end this close to the goal at rest
MIN_EFFORT_GOAL_TOLERANCE = 1e-6
#: the effort margins an automatic retime tries, largest first
AUTOMATIC_EFFORT_SCALES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


class PlanMethod(enum.Enum):
    MIN_TIME = "min_time"
    MIN_EFFORT = "min_effort"
    RETIME = "retime"

    @classmethod
    def parse(cls, text: str) -> "PlanMethod":
        """A plan request's method: '' = min_time; anything else but min_time and min_effort is an InputError
        listing them (a stack's path is retimed by :meth:`TrajectoryPlanner.retime`)."""
        planning = (cls.MIN_TIME, cls.MIN_EFFORT)
        if not text:
            return cls.MIN_TIME
        if text not in [m.value for m in planning]:
            raise InputError(f"unknown method {text!r}: use one of {', '.join(m.value for m in planning)}")
        return cls(text)


@dataclass(frozen=True)
class PlannerSettings:
    """Defaults of the planning service (config/trajectory_planner.yaml)."""

    grid_points: int = 100          # min-time path nodes over the whole path
    smooth: bool = False            # pass interior waypoints without stopping (spline path, NLP planner)
    time_step: float = 0.033        # s, min-effort (DMOC) step when the request gives no hint
    max_min_effort_steps: int = 200  # bound on duration / time_step for min-effort requests
    max_waypoints: int = 50         # bound on the waypoints of one request (the work grows with them)
    max_duration: float = 3600.0    # s, longest plan answered (a longer one means limits too small to be meant)
    start_tolerance: float = 0.05   # rad or m, largest distance of a given first waypoint from the arm's state
    rest_tolerance: float = 0.05    # rad/s or m/s, fastest joint speed still counted as "at rest" for a start
    # attach each min_time and min_effort plan's predicted execution (planning/prediction.py; retimes always carry
    # it), and choose the effort margin by it. It simulates the whole motion at the node's 1 ms step (UR5: about
    # 0.17 ms a step, 0.2 s for a 0.5 s plan and its settling)
    predict: bool = True
    max_retime_points: int = 2000   # bound on the points of one retime request

    def __post_init__(self):
        whole_number(self.grid_points, "grid_points", low=3)
        positive_step(self.time_step, "time_step")
        whole_number(self.max_min_effort_steps, "max_min_effort_steps", low=2)
        whole_number(self.max_waypoints, "max_waypoints", low=2)


@dataclass(frozen=True)
class ArmState:
    """The arm's measured state in the model's joint order: rad or m, rad/s or m/s."""

    positions: np.ndarray
    velocities: np.ndarray


@dataclass(frozen=True)
class PlannedTrajectory:
    """Points (N+1) in the model's joint order: rad (m), rad/s, rad/s², N m (N)."""

    joint_names: tuple[str, ...]
    t: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray
    method: PlanMethod
    details: dict = field(default_factory=dict)
    predicted: PredictedExecution | None = None

    @property
    def duration(self) -> float:
        return float(self.t[-1])


def _in_model_order(values, names: Sequence[str], model_names: Sequence[str], what: str) -> np.ndarray:
    """A per-joint array given in ``names`` order, reordered to the model's; InputError on length or NaN."""
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.size != len(names):
        raise InputError(f"{what}: expected {len(names)} values (one per joint), got {array.size}")
    if np.any(np.isnan(array)):
        raise InputError(f"{what}: values must not be NaN, got {array.tolist()}")
    order = [list(names).index(name) for name in model_names]
    return array[order]


def min_time_trajectory(plan, system: RigidBodySystem) -> PlannedTrajectory:
    """A minimum-time plan (:func:`.min_time.plan_min_time`) of ``system``'s arm as a PlannedTrajectory: efforts
    held from point k to k + 1, the last point's the torque holding the arm at the goal (N m or N)."""
    efforts = np.vstack([plan.torques, np.asarray(system.potential_gradient(plan.q[-1]), dtype=float)])
    return PlannedTrajectory(tuple(plan.joint_names), plan.t, plan.q, plan.qd, plan.accelerations, efforts,
                             PlanMethod.MIN_TIME,
                             {"steps": plan.steps, "planning_time_s": plan.planning_time, "planner": plan.method,
                              "max_torque_utilisation": float(np.max(plan.torque_utilisation))})


def min_effort_trajectory(solution, goal: np.ndarray, system: RigidBodySystem) -> PlannedTrajectory:
    """A minimum-effort solution (:func:`.dmoc_sparse.min_effort`, checked to end at ``goal``) of ``system``'s arm
    as a PlannedTrajectory: the discrete model's replay of its forces, the last point the goal at rest exactly (a
    trajectory executor refuses a final velocity that is not zero: FollowJointTrajectory without nonzero end
    velocity), the last effort the torque holding the arm there."""
    positions, velocities = solution.q.copy(), solution.velocity.copy()
    positions[-1], velocities[-1] = goal, 0.0
    qdd = np.diff(velocities, axis=0) / solution.h
    efforts = np.vstack([solution.controls, np.asarray(system.potential_gradient(positions[-1]), dtype=float)])
    return PlannedTrajectory(tuple(system.model.joint_names), solution.t, positions, velocities,
                             np.vstack([qdd, qdd[-1:]]), efforts, PlanMethod.MIN_EFFORT,
                             {"steps": int(solution.t.size - 1), "effort": solution.effort,
                              "solve_time_s": solution.outcome.solve_time, "solver": solution.outcome.message,
                              "iterations": solution.outcome.iterations})


class TrajectoryPlanner:
    """Plans for one robot model on its discrete dynamic model (min_time, and min_effort by sparse DMOC)."""

    def __init__(self, model: RobotModel, settings: PlannerSettings | None = None):
        self.model = model
        self.settings = PlannerSettings() if settings is None else settings
        self.system = RigidBodySystem(model)
        self.discrete = DiscreteDynamicModel(self.system)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.model.joint_names)

    def request_names(self, joint_names: Sequence[str]) -> list[str]:
        """The request's joint order: the model's when empty, else a permutation of it (InputError otherwise)."""
        model_order(joint_names, self.joint_names)
        return list(joint_names) or list(self.joint_names)

    def plan(self, waypoints, joint_names: Sequence[str] = (), max_effort: Sequence[float] = (),
             max_velocity: Sequence[float] = (), method: str = "", duration: float = 0.0,
             time_step_hint: float = 0.0, current: ArmState | None = None,
             from_current_state: bool = False, effort_scale: float = 0.0) -> PlannedTrajectory:
        """Validate and plan (see the module docstring); ``current``: the arm's measured state, if known.

        ``effort_scale`` in (0, 1] multiplies the effort limits. 0 chooses a min_time plan's margin when the limits
        are the model's (no ``max_effort``) and the planner predicts executions: the largest of
        :data:`AUTOMATIC_EFFORT_SCALES` whose predicted execution meets its tolerances, as :meth:`retime` chooses
        it; otherwise 0 means 1. Limits given in ``max_effort`` are the caller's, used as given. A min_effort plan's
        duration is the caller's, and a smaller torque bound would not shorten its settling: no automatic margin."""
        names = self.request_names(joint_names)
        chosen = PlanMethod.parse(method)
        from_current_state = from_current_state or len(waypoints) == 1
        given = len(waypoints) + (1 if from_current_state else 0)
        if given < 2:
            raise InputError("waypoints: none given (give at least the goal)")
        if given > self.settings.max_waypoints:
            raise InputError(f"waypoints: {given} given, more than max_waypoints = {self.settings.max_waypoints}")
        points = [finite_vector(p, len(names), f"waypoint {i}") for i, p in enumerate(waypoints)]
        model_names = list(self.joint_names)
        q = np.array([_in_model_order(p, names, model_names, f"waypoint {i}") for i, p in enumerate(points)])
        q = self._start_at(current, q, from_current_state)
        effort = None if len(max_effort) == 0 else _in_model_order(max_effort, names, model_names, "max_effort")
        velocity = None if len(max_velocity) == 0 else _in_model_order(max_velocity, names, model_names,
                                                                      "max_velocity")
        limits = JointLimits.from_model(self.model, effort, velocity)
        limits.check_positions(q)
        for i in (0, len(q) - 1):
            limits.check_holding(self.system.potential_gradient(q[i]), q[i])
        automatic = effort_scale == 0.0 and effort is None and self.settings.predict and chosen is PlanMethod.MIN_TIME
        # 0 without automation: the limits as they are
        scales = AUTOMATIC_EFFORT_SCALES if automatic else (
            finite_scalar(effort_scale or 1.0, "effort_scale", low=0.0, high=1.0),)

        def planned(scale: float) -> PlannedTrajectory:
            scaled = dataclasses.replace(limits, effort=scale * limits.effort)
            plan = (self._min_time(q, scaled) if chosen is PlanMethod.MIN_TIME
                    else self._min_effort(q, scaled, duration, time_step_hint))
            self._check_times(plan.t)
            return dataclasses.replace(plan, details=dict(plan.details, effort_scale=f"{scale:g}"))

        return self._with_margin(planned, scales)

    def retime(self, positions, joint_names: Sequence[str] = (), effort_scale: float = 0.0,
               velocity_scale: float = 1.0, acceleration_limits=None,
               interpolation: str = "spline") -> PlannedTrajectory:
        """A stack's path (points (N, n) in ``joint_names`` order; its timing ignored) retimed for minimum time
        under the model's limits times ``effort_scale`` and ``velocity_scale`` (:func:`.retime.retime`).

        ``effort_scale`` 0 chooses the margin: the largest of :data:`AUTOMATIC_EFFORT_SCALES` whose predicted
        execution meets its tolerances (:mod:`.prediction`), the reason in ``details["effort_scale"]``; 1 gives the
        true minimum time."""
        try:
            points = np.asarray(positions, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"positions: every point needs {len(self.joint_names)} numbers") from None
        if points.ndim != 2 or points.shape[0] > self.settings.max_retime_points:
            raise InputError(f"positions: expected 2 to {self.settings.max_retime_points} points of "
                             f"{len(self.joint_names)} values, got shape {points.shape}")
        scales = AUTOMATIC_EFFORT_SCALES if effort_scale == 0.0 else (effort_scale,)

        def planned(scale: float) -> PlannedTrajectory:
            timed = retime(self.model, joint_names, points, scale, velocity_scale, acceleration_limits,
                           interpolation, system=self.system)
            plan = PlannedTrajectory(self.joint_names, timed.t, timed.positions, timed.velocities,
                                     timed.accelerations, timed.efforts, PlanMethod.RETIME,
                                     {"interpolation": interpolation, "effort_scale": f"{scale:g}",
                                      "planning_time_s": timed.planning_time})
            self._check_times(plan.t)
            return plan

        return self._with_margin(planned, scales, predict=True)

    def _with_margin(self, planned, scales: Sequence[float], predict: bool | None = None) -> PlannedTrajectory:
        """``planned(scale)``'s plan at the first of ``scales`` whose predicted execution meets its tolerances (the
        last that plans when none does; a smaller margin that cannot hold the arm ends the search), with its
        prediction when ``predict`` (default: the settings'); ``details["effort_scale"]`` says which and why."""
        predict = self.settings.predict if predict is None else predict
        plan = None
        for scale in scales:
            try:
                candidate = planned(scale)
            except InfeasibleError:
                if plan is None:
                    raise
                break
            plan = self._with_prediction(candidate) if predict else candidate
            if not predict or plan.predicted.meets_tolerances:
                break
        if len(scales) > 1:
            scale = float(plan.details["effort_scale"])
            plan.details["effort_scale"] = (
                f"{scale:g}, chosen as the largest of {', '.join(f'{v:g}' for v in scales)} whose predicted execution "
                "meets the goal tolerance within MoveIt's 1.2 x duration + 0.5 s" if plan.predicted.meets_tolerances
                else f"{scale:g}: no margin from 1 down to {scale:g} meets the tolerances (a smaller one is not tried "
                     "or cannot hold the arm)")
        return plan

    def _with_prediction(self, plan: PlannedTrajectory) -> PlannedTrajectory:
        """The plan with its predicted execution attached (and stated in ``details``)."""
        predicted = predict_execution(self.model, plan.t, plan.positions, plan.velocities, plan.accelerations,
                                      plan.efforts, system=self.system)
        return dataclasses.replace(plan, details=dict(plan.details, predicted=predicted.message()),
                                   predicted=predicted)

    def _start_at(self, current: ArmState | None, q: np.ndarray, from_current_state: bool) -> np.ndarray:
        """The waypoints with the arm's state as the start (module docstring), InputError when it cannot be."""
        if current is None:
            if from_current_state:
                raise InputError("waypoints: the start is omitted but the arm's state is unknown (no joint_states "
                                 "received yet): give the start as the first waypoint")
            return q
        speed = np.abs(current.velocities)
        if np.max(speed) > self.settings.rest_tolerance:
            r = int(np.argmax(speed))
            raise InputError(f"the arm is moving (joint '{self.joint_names[r]}' at {current.velocities[r]:.3g} "
                             f"rad/s, more than rest_tolerance = {self.settings.rest_tolerance:g}): plans start at "
                             "rest; wait until it settles")
        if from_current_state:
            return np.vstack([current.positions, q])
        distance = np.abs(q[0] - current.positions)
        if np.max(distance) > self.settings.start_tolerance:
            r = int(np.argmax(distance))
            raise InputError(f"waypoint 0 is {distance[r]:.4g} rad from the arm's current state (joint "
                             f"'{self.joint_names[r]}' at {current.positions[r]:.4g}), more than start_tolerance = "
                             f"{self.settings.start_tolerance:g}: omit it to plan from the current state")
        return q

    def _check_times(self, t: np.ndarray) -> None:
        """The plan's times: finite, strictly increasing from 0, at most ``max_duration`` (InfeasibleError)."""
        if not np.all(np.isfinite(t)) or t[-1] > self.settings.max_duration:
            raise InfeasibleError(f"the plan lasts {t[-1]:.3g} s, more than max_duration = "
                                  f"{self.settings.max_duration:g} s: max_velocity or max_effort are too small")
        if np.any(np.diff(t) < 1e-9):
            raise InfeasibleError("the plan's times do not increase by at least the 1 ns resolution of "
                                  "time_from_start: max_velocity or max_effort are too large or too small")

    def _replay_tolerance(self, start: np.ndarray, solution) -> float:
        """How far from the goal at rest (rad, rad/s) the replay of a converged min-effort solve may end: the
        spread of the replay's end under force errors of the solver's own size (its constraint tolerance, relative
        to the largest force; twice, for a margin), at least :data:`MIN_EFFORT_GOAL_TOLERANCE` and at most the goal
        tolerance the predicted execution is judged by (:data:`.prediction.DEFAULT_GOAL_TOLERANCE`). Over a long
        motion under gravity the replay amplifies the solve's residual by many orders (residual 5e-11, goal missed by
        3.1e-3 rad, 2-link arm, 5 s at 25 ms; the spread is larger still), so an absolute 1e-6 refuses converged
        solves."""
        forces = solution.controls
        bump = CONSTRAINT_TOL * max(float(np.max(np.abs(forces))), 1.0) * np.where(np.arange(forces.shape[1]) % 2,
                                                                                      1.0, -1.0)
        ends = [accurate_model(self.discrete).simulate(start, np.zeros(start.size), solution.h, forces.shape[0],
                                                       forces=forces + sign * bump) for sign in (1.0, -1.0)]
        spread = max(float(np.max(np.abs(ends[0].q[-1] - ends[1].q[-1]))),
                     float(np.max(np.abs(ends[0].qd[-1] - ends[1].qd[-1]))))
        return max(MIN_EFFORT_GOAL_TOLERANCE, min(2.0 * spread, DEFAULT_GOAL_TOLERANCE))

    def _min_time(self, q: np.ndarray, limits: JointLimits) -> PlannedTrajectory:
        plan = plan_min_time(self.discrete, WaypointPath(q, smooth=self.settings.smooth), limits,
                             self.settings.grid_points)
        return min_time_trajectory(plan, self.system)

    def _min_effort(self, q: np.ndarray, limits: JointLimits, duration: float, hint: float) -> PlannedTrajectory:
        if not (np.isfinite(duration) and duration > 0.0):
            raise InputError(f"min_effort needs duration > 0 s, got {duration}")
        if not (np.isfinite(hint) and hint >= 0.0):
            raise InputError(f"time_step_hint must be >= 0 s, got {hint}")
        h = hint if hint > 0.0 else self.settings.time_step
        if duration / h > self.settings.max_min_effort_steps:
            raise InputError(f"min_effort: {duration} s at h = {h} s is more than {self.settings.max_min_effort_steps}"
                             " steps; give a larger time_step_hint")
        solution = min_effort(self.discrete, q[0], q[-1], duration, h, limits, continuous=False, via=q[1:-1])
        # the motion returned is the discrete model's replay of the optimal forces from rest: it must end at the
        # goal at rest, to what the solver's own tolerance explains once the motion's instability amplifies it
        allowed = self._replay_tolerance(q[0], solution)
        if not solution.outcome.success or solution.terminal_error > allowed:
            raise InfeasibleError(f"min_effort: no motion found within the torque, velocity and position limits "
                                  f"in {duration} s ({solution.outcome.message}; goal missed by "
                                  f"{solution.terminal_error:.3g}, more than the {allowed:.3g} the solver's "
                                  "tolerance explains)")
        # DMOC bounds the node velocities; the replay meets them to its round-off
        too_fast = limits.velocity_utilisation(solution.velocity) > 1.0 + 1e-6
        if np.any(too_fast):
            k = int(np.argmax(too_fast))
            r = int(np.argmax(np.abs(solution.velocity[k]) / limits.velocity))
            raise InfeasibleError(f"min_effort: joint '{self.joint_names[r]}' reaches {solution.velocity[k, r]:.4g} "
                                  f"rad/s at t = {solution.t[k]:.3g} s, above its velocity limit "
                                  f"{limits.velocity[r]:g}: give a longer duration")
        # the motion is the integrator's replay of the optimised forces: it meets the bounds to round-off
        limits.check_positions(solution.q, "min_effort: point", slack=1e-6)
        return min_effort_trajectory(solution, q[-1], self.system)
