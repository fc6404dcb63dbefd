"""Executing a joint trajectory goal: tolerances and the outcome, as control_msgs' FollowJointTrajectory defines them.

A goal is a :class:`~discrete_robot.discrete.tracking.TrajectoryReference` started at some simulated time,
with tolerances per joint. While the trajectory runs, every position and velocity error must stay within
the path tolerances (else PATH_TOLERANCE_VIOLATED); from its end, the state must come within the goal
tolerances no later than ``goal_time`` after the end (SUCCESSFUL, else GOAL_TOLERANCE_VIOLATED).
A tolerance given as 0 takes the server's default, −1 removes the check (JointTolerance's convention).
Acceleration and effort tolerances are not checked (the simulator has no acceleration sensor to honour
them against; efforts are the commands themselves).
"""

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discrete_robot.discrete.tracking import JointNamesError, TrajectoryReference
from discrete_robot.errors import InputError


class ErrorCode(enum.IntEnum):
    """control_msgs/action/FollowJointTrajectory's result codes (same values)."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


@dataclass(frozen=True)
class Outcome:
    """How a goal ended: the code and a readable reason."""

    code: ErrorCode
    message: str


@dataclass(frozen=True)
class JointTolerance:
    """One joint's tolerance as a goal gives it: name, position (rad or m), velocity (rad/s or m/s)."""

    name: str
    position: float
    velocity: float


@dataclass(frozen=True)
class Tolerances:
    """Per-joint limits in the model's joint order (inf = unchecked) and the goal time tolerance, s."""

    path_position: np.ndarray
    path_velocity: np.ndarray
    goal_position: np.ndarray
    goal_velocity: np.ndarray
    goal_time: float


def _resolve(defaults: np.ndarray, given: Sequence[float], index: Sequence[int], what: str) -> np.ndarray:
    values = defaults.copy()
    for i, value in zip(index, given, strict=True):
        if not np.isfinite(value) or (value < 0.0 and value != -1.0):
            raise InputError(f"{what}: a tolerance is > 0, 0 (the default) or -1 (none), got {value}")
        if value == -1.0:
            values[i] = np.inf
        elif value > 0.0:
            values[i] = value
    return values


def resolve_tolerances(joints: Sequence[str], defaults: Tolerances, path: Sequence[JointTolerance],
                       goal: Sequence[JointTolerance], goal_time: float) -> Tolerances:
    """The tolerances a goal asks for, its zeros replaced by ``defaults``; JointNamesError for an unknown joint,
    InputError for a negative tolerance other than -1."""
    joints = list(joints)

    def index(tolerances, what):
        unknown = [t.name for t in tolerances if t.name not in joints]
        if unknown:
            raise JointNamesError(f"{what}: unknown joint name(s) {unknown}; the joints are {joints}")
        return [joints.index(t.name) for t in tolerances]

    path_index, goal_index = index(path, "path_tolerance"), index(goal, "goal_tolerance")
    if not np.isfinite(goal_time) or goal_time < 0.0:
        raise InputError(f"goal_time_tolerance: must be finite and >= 0 s, got {goal_time}")
    return Tolerances(
        _resolve(defaults.path_position, [t.position for t in path], path_index, "path_tolerance.position"),
        _resolve(defaults.path_velocity, [t.velocity for t in path], path_index, "path_tolerance.velocity"),
        _resolve(defaults.goal_position, [t.position for t in goal], goal_index, "goal_tolerance.position"),
        _resolve(defaults.goal_velocity, [t.velocity for t in goal], goal_index, "goal_tolerance.velocity"),
        goal_time if goal_time > 0.0 else defaults.goal_time)


def _violation(joints, errors: np.ndarray, limits: np.ndarray, what: str) -> str | None:
    over = np.flatnonzero(np.abs(errors) > limits)
    if over.size == 0:
        return None
    return "; ".join(f"joint {joints[i]}: {what} error {errors[i]:.4g} exceeds the tolerance {limits[i]:.4g}"
                     for i in over)


class TrajectoryExecution:
    """One goal being executed: its reference from ``start_time`` (simulated s) and its tolerances."""

    def __init__(self, joints: Sequence[str], reference: TrajectoryReference, start_time: float,
                 tolerances: Tolerances):
        self.joints = list(joints)
        self.reference = reference
        self.start_time = start_time
        self.tolerances = tolerances

    def check(self, t: float, q: np.ndarray, qd: np.ndarray) -> Outcome | None:
        """The outcome once decided at simulated time t with state (q, q̇), else None (still running)."""
        elapsed = t - self.start_time
        desired = self.reference.sample(elapsed)
        position_error, velocity_error = desired.q - q, desired.qd - qd
        tolerances = self.tolerances
        if elapsed < self.reference.duration:
            reason = (_violation(self.joints, position_error, tolerances.path_position, "position")
                      or _violation(self.joints, velocity_error, tolerances.path_velocity, "velocity"))
            if reason:
                return Outcome(ErrorCode.PATH_TOLERANCE_VIOLATED, f"at t = {elapsed:.3f} s: {reason}")
            return None
        reason = (_violation(self.joints, position_error, tolerances.goal_position, "position")
                  or _violation(self.joints, velocity_error, tolerances.goal_velocity, "velocity"))
        if reason is None:
            return Outcome(ErrorCode.SUCCESSFUL, f"reached the goal {elapsed - self.reference.duration:.3f} s after "
                                                 f"the trajectory's end; largest position error "
                                                 f"{np.abs(position_error).max():.3g}")
        if elapsed > self.reference.duration + tolerances.goal_time:
            return Outcome(ErrorCode.GOAL_TOLERANCE_VIOLATED,
                           f"{tolerances.goal_time:.3f} s after the trajectory's end: {reason}")
        return None
