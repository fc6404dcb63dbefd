"""A plan's predicted execution: the plan run through the simulator's own model and joint_trajectory_controller's
tracking, in process and faster than real time, before anyone executes it.

What is simulated is what ``discrete_robot_node`` does with the plan sent to its FollowJointTrajectory action:
the discrete dynamic model (the node's default integrator) at the node's 1 ms step, the model's joint damping,
friction and position stops, the plan's points interpolated as JTC interpolates them (quintic with
accelerations), and the node's tracking law, the plan's efforts as feedforward plus PD (kp = 100 1/s²,
kd = 20 1/s, its defaults) through M(q), saturated at the model's effort limits
(discrete_robot.control). The goal is checked at every step as JTC checks it after the last point:
every joint within the goal position tolerance and at rest within ``stopped_velocity_tolerance``.

Reported per joint: the largest tracking error |q_d − q| until the goal is met (rad or m), the peak effort as a
fraction of the limit; and the end lag: the time after the last point until the goal tolerance is met (s; inf
when not met within twice the allowed lag). The goal tolerance is the controller's where it has one, else
:data:`DEFAULT_GOAL_TOLERANCE` on every joint (stated in the summary). The tolerances hold when no joint leaves
its path tolerance (where > 0) before the last point and the lag is within what the executor allows: MoveIt's
default duration monitoring, 1.2 × duration + 0.5 s (panda_moveit_config's
``allowed_execution_duration_scaling`` and ``allowed_goal_duration_margin``), and the controller's
``goal_time`` when it sets one.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.control.computed_torque import tracking_torques
from discrete_robot.control.trajectory import TrajectoryReference
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.dynamics import RigidBodySystem

#: rad (or m), the goal position tolerance of every joint when the controller sets none
DEFAULT_GOAL_TOLERANCE = 0.01
#: rad/s, JTC's default ``constraints.stopped_velocity_tolerance``
STOPPED_VELOCITY_TOLERANCE = 0.01
#: MoveIt's default trajectory execution monitoring: abort past scaling × duration + margin (s)
MOVEIT_DURATION_SCALING = 1.2
MOVEIT_DURATION_MARGIN = 0.5


@dataclass(frozen=True)
class ExecutionSettings:
    """The executing controller and simulator: gains (1/s², 1/s), step (s), tolerances per joint in the model's
    order (rad or m; path 0 = unchecked; goal None = :data:`DEFAULT_GOAL_TOLERANCE`), ``goal_time`` (s, 0 = no
    limit of its own)."""

    kp: float = 100.0
    kd: float = 20.0
    time_step: float = 1e-3
    goal_tolerance: Sequence[float] | None = None
    path_tolerance: Sequence[float] | None = None
    goal_time: float = 0.0
    stopped_velocity_tolerance: float = STOPPED_VELOCITY_TOLERANCE


@dataclass(frozen=True)
class PredictedExecution:
    """The predicted execution of one plan (module docstring); arrays per joint in the model's order."""

    joint_names: tuple[str, ...]
    max_tracking_error: np.ndarray
    peak_effort_fraction: np.ndarray
    end_lag: float
    allowed_lag: float
    goal_tolerance: np.ndarray
    goal_tolerance_stated: bool
    path_tolerance_holds: bool

    @property
    def meets_tolerances(self) -> bool:
        return self.path_tolerance_holds and self.end_lag <= self.allowed_lag

    def summary(self) -> dict:
        """The prediction as plain data (maps by joint name)."""
        return {"max_tracking_error": dict(zip(self.joint_names, self.max_tracking_error.tolist(), strict=True)),
                "peak_effort_fraction": dict(zip(self.joint_names, self.peak_effort_fraction.tolist(), strict=True)),
                "end_lag": self.end_lag, "allowed_lag": self.allowed_lag,
                "goal_tolerance": dict(zip(self.joint_names, self.goal_tolerance.tolist(), strict=True)),
                "path_tolerance_holds": self.path_tolerance_holds, "meets_tolerances": self.meets_tolerances}

    def message(self) -> str:
        """One line: lag, largest error and effort, and whether the execution will meet its tolerances."""
        worst = int(np.argmax(self.max_tracking_error))
        tolerance = (f"{self.goal_tolerance.max():g} rad on every joint (none set)" if self.goal_tolerance_stated
                     else "the controller's")
        lag = f"{self.end_lag:.3f} s" if np.isfinite(self.end_lag) else f"more than {2.0 * self.allowed_lag:.3f} s"
        verdict = "meets its tolerances" if self.meets_tolerances else (
            "will LAG past the allowed time" if self.path_tolerance_holds else "will leave its path tolerance")
        return (f"predicted execution {verdict}: goal ({tolerance}) reached {lag} after the last point (allowed "
                f"{self.allowed_lag:.3f} s), largest tracking error {self.max_tracking_error[worst]:.3g} rad on "
                f"'{self.joint_names[worst]}', peak effort {100.0 * self.peak_effort_fraction.max():.0f} % of the "
                "limit")


@dataclass(frozen=True)
class MeasuredExecution:
    """An executed plan as measured on the robot's joint states, in the terms of :class:`PredictedExecution`:
    the largest tracking error per joint (rad or m) until the goal was met, and the end lag (s; inf when no sample
    met the goal)."""

    max_tracking_error: np.ndarray
    end_lag: float
    samples: int

    def against(self, predicted: PredictedExecution) -> str:
        """One line: measured beside predicted, the largest error and the end lag."""
        worst = int(np.argmax(self.max_tracking_error))
        lag = f"{self.end_lag:.3f} s" if np.isfinite(self.end_lag) else "not reached"
        return (f"measured over {self.samples} joint states: largest tracking error "
                f"{self.max_tracking_error[worst]:.3g} rad on '{predicted.joint_names[worst]}' (predicted "
                f"{predicted.max_tracking_error[worst]:.3g}), end lag {lag} (predicted {predicted.end_lag:.3f} s)")


def at_goal(q, qd, goal, goal_tolerance, stopped_velocity_tolerance: float) -> bool:
    """JTC's check after the last point: every joint within its goal tolerance of ``goal`` (rad or m) and at rest
    within ``stopped_velocity_tolerance`` (rad/s or m/s)."""
    return bool(np.all(np.abs(q - goal) <= goal_tolerance) and np.all(np.abs(qd) <= stopped_velocity_tolerance))


def measure_execution(plan_t, positions, velocities, accelerations, samples_t, samples_q, samples_qd,
                      goal_tolerance, stopped_velocity_tolerance: float = STOPPED_VELOCITY_TOLERANCE
                      ) -> MeasuredExecution:
    """The execution of a plan (knot times ``plan_t`` (N,), s from 0; per knot positions, velocities,
    accelerations (N, n)) measured at joint states: ``samples_t`` (M,) s since the execution began, in order,
    ``samples_q`` and ``samples_qd`` (M, n). The reference is the plan joined as JTC joins it; the error is taken
    at every sample until the first one at or after the last point that meets the goal (:func:`at_goal`)."""
    positions = np.asarray(positions, dtype=float)
    reference = TrajectoryReference(plan_t, positions, velocities, None, accelerations)
    end, goal = float(plan_t[-1]), positions[-1]
    error, lag, count = np.zeros(positions.shape[1]), np.inf, 0
    for t, q, qd in zip(samples_t, np.asarray(samples_q, float), np.asarray(samples_qd, float), strict=True):
        error = np.maximum(error, np.abs(reference.sample(t).q - q))
        count += 1
        if t >= end and at_goal(q, qd, goal, goal_tolerance, stopped_velocity_tolerance):
            lag = t - end
            break
    return MeasuredExecution(error, float(lag), count)


def allowed_lag(duration: float, goal_time: float = 0.0) -> float:
    """s after the last point an execution may take: MoveIt's monitoring, and the controller's goal_time if set."""
    moveit = (MOVEIT_DURATION_SCALING - 1.0) * duration + MOVEIT_DURATION_MARGIN
    return min(moveit, goal_time) if goal_time > 0.0 else moveit


def predict_execution(model, t, positions, velocities, accelerations, efforts,
                      settings: ExecutionSettings | None = None,
                      system: RigidBodySystem | None = None) -> PredictedExecution:
    """Simulate the plan's execution (module docstring): knot times t (N,), s from 0, and per knot positions,
    velocities, accelerations and efforts (N, n) in the model's joint order."""
    settings = ExecutionSettings() if settings is None else settings
    system = RigidBodySystem(model) if system is None else system
    n = model.dof
    stated = settings.goal_tolerance is None
    goal_tolerance = np.full(n, DEFAULT_GOAL_TOLERANCE) if stated else np.asarray(settings.goal_tolerance, float)
    path_tolerance = np.zeros(n) if settings.path_tolerance is None else np.asarray(settings.path_tolerance, float)
    positions = np.asarray(positions, dtype=float)
    reference = TrajectoryReference(t, positions, velocities, efforts, accelerations)
    limits = np.asarray(model.effort_limits, dtype=float)
    simulation = FixedStepSimulation(system, "discrete", settings.time_step, positions[0], np.zeros(n), model.lower,
                                     model.upper, Dissipation.from_model(model), model.joint_names)
    end, goal = float(t[-1]), positions[-1]
    allowed = allowed_lag(end, settings.goal_time)
    steps = int(np.ceil((end + 2.0 * allowed) / settings.time_step))
    error, effort = np.zeros(n), np.zeros(n)
    path_holds, lag = True, np.inf
    for _ in range(steps):
        budget.check()
        now = simulation.time
        desired = reference.sample(now)
        deviation = np.abs(desired.q - simulation.q)
        error = np.maximum(error, deviation)
        if now < end:
            path_holds &= not np.any((path_tolerance > 0.0) & (deviation > path_tolerance))
        elif at_goal(simulation.q, simulation.qd, goal, goal_tolerance, settings.stopped_velocity_tolerance):
            lag = now - end
            break
        tau = tracking_torques(system, simulation.q, simulation.qd, desired, settings.kp, settings.kd, limits)
        effort = np.maximum(effort, np.abs(tau) / limits)
        simulation.step(1, tau)
    return PredictedExecution(tuple(model.joint_names), error, effort, float(lag), allowed, goal_tolerance, stated,
                              bool(path_holds))
