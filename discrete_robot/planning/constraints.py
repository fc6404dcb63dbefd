"""Joint limits a planned motion must respect: torque, velocity and position, with their validation.

The limits are symmetric boxes per generalised coordinate r: |F_r| ≤ effort_r (N m or N),
|q̇_r| ≤ velocity_r (rad/s or m/s, ∞ allowed) and lower_r ≤ q_r ≤ upper_r (rad or m, ±∞ allowed).
They know nothing about paths or algorithms: the planners ask them for the box and for the speed cap
along a direction, and the boundary checks raise a reason naming the joint.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InfeasibleError, InputError

#: how far (relative to the limit) a value may pass a limit and still count as within it (round-off)
LIMIT_TOLERANCE = 1e-9


def _per_joint(values, n: int, what: str, allow_inf: bool) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.shape != (n,):
        raise InputError(f"{what}: expected {n} values (one per joint), got {array.size}")
    if np.any(np.isnan(array)) or (not allow_inf and not np.all(np.isfinite(array))):
        raise InputError(f"{what}: values must be {'numbers' if allow_inf else 'finite'}, got {array.tolist()}")
    if np.any(array <= 0.0):
        raise InputError(f"{what}: values must be > 0, got {array.tolist()}")
    return array


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits in the model's joint order."""

    joint_names: tuple[str, ...]
    effort: np.ndarray
    velocity: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def create(cls, joint_names: Sequence[str], effort, velocity=None, lower=None, upper=None) -> "JointLimits":
        """Validated limits; ``velocity`` None = unlimited, ``lower``/``upper`` None = unbounded.

        Minimum-time planning needs every torque limit finite (an unlimited joint could move in no time).
        """
        names = tuple(joint_names)
        n = len(names)
        effort = _per_joint(effort, n, "torque limits (max_effort)", allow_inf=False)
        velocity = np.full(n, np.inf) if velocity is None else _per_joint(velocity, n, "velocity limits", True)
        lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float).reshape(n)
        upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float).reshape(n)
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
            raise InputError(f"position limits: need lower <= upper, got {lower.tolist()}, {upper.tolist()}")
        return cls(names, effort, velocity, lower, upper)

    @classmethod
    def from_model(cls, model, max_effort=None, max_velocity=None) -> "JointLimits":
        """The model file's limits (a :class:`RobotModel`), overridden per request where given (non-empty)."""
        effort = model.effort_limits if max_effort is None or len(max_effort) == 0 else max_effort
        velocity = model.velocity_limits if max_velocity is None or len(max_velocity) == 0 else max_velocity
        if not np.all(np.isfinite(np.asarray(effort, dtype=float))):
            unlimited = [name for name, e in zip(model.joint_names, np.asarray(effort, dtype=float), strict=True)
                         if not np.isfinite(e)]
            raise InputError(f"torque limits: joints {unlimited} have no effort limit in the model file; "
                             "give max_effort for every joint")
        return cls.create(model.joint_names, effort, velocity, model.lower, model.upper)

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    def check_positions(self, positions, what: str = "waypoint", slack: float = 0.0) -> None:
        """Raise InfeasibleError naming the first point and joint outside [lower − slack, upper + slack]."""
        points = np.atleast_2d(np.asarray(positions, dtype=float))
        outside = (points < self.lower - slack) | (points > self.upper + slack)
        if np.any(outside):
            i, r = (int(v) for v in np.argwhere(outside)[0])
            raise InfeasibleError(
                f"{what} {i}: joint '{self.joint_names[r]}' at {points[i, r]:.6g} is outside its limits "
                f"[{self.lower[r]:.6g}, {self.upper[r]:.6g}]")

    def speed_cap(self, direction: np.ndarray) -> float:
        """Largest path speed v (per unit of s) with |v·direction_r| ≤ velocity_r for all r; ∞ if unlimited."""
        direction = np.abs(np.asarray(direction, dtype=float))
        with np.errstate(divide="ignore"):
            caps = np.where(direction > 0.0, self.velocity / direction, np.inf)
        return float(np.min(caps))

    def torque_utilisation(self, torques) -> np.ndarray:
        """max_r |F_r| / effort_r per row of ``torques`` (…, n): 1 = some joint at its limit."""
        return np.max(np.abs(np.asarray(torques, dtype=float)) / self.effort, axis=-1)

    def velocity_utilisation(self, velocities) -> np.ndarray:
        """max_r |q̇_r| / velocity_r per row (0 where every joint is unlimited)."""
        return np.max(np.abs(np.asarray(velocities, dtype=float)) / self.velocity, axis=-1)

    def check_holding(self, holding_torque: np.ndarray, position: np.ndarray) -> None:
        """Raise InfeasibleError if the torque that holds the arm still at ``position`` exceeds a limit (one
        configuration (n,), or rows (m, n) of torques and positions).

        Planning needs a strict margin: an arm that can only just hold its weight cannot move.
        """
        torque, position = np.atleast_2d(holding_torque), np.atleast_2d(position)
        excess = np.argwhere(np.abs(torque) >= self.effort * (1.0 - LIMIT_TOLERANCE))
        if excess.size:
            k, r = excess[0]
            raise InfeasibleError(
                f"joint '{self.joint_names[r]}' needs {abs(torque[k, r]):.6g} N m to hold the arm against "
                f"gravity at q = {np.round(position[k], 6).tolist()}, more than its limit {self.effort[r]:.6g} N m")
