"""Joint-trajectory tracking for a simulated robot: the reference, and feedforward inverse dynamics plus PD.

A trajectory (joint names in any order, knot times, positions and optionally velocities and
efforts) becomes a C² reference in the model's joint order: a cubic Hermite spline through the
knots when every knot has velocities, otherwise a cubic spline with zero velocity at both
ends; efforts, when given, are interpolated linearly between knots. When the first knot is
later than t = 0, the current state is prepended as the knot at 0, so the robot moves off from
where it is (as ROS trajectory controllers do). After the last knot the reference holds its
last position at rest (and the last effort).

The control law is computed torque: the desired acceleration corrected by PD,

    τ = ID(q, q̇, q̈_d + k_d (q̇_d − q̇) + k_p (q_d − q)),

i.e. feedforward inverse dynamics of the reference plus a PD term that acts through the
same inverse dynamics, so k_p (1/s²) and k_d (1/s) give every joint the error dynamics
ë + k_d ė + k_p e = 0 whatever its inertia. When the trajectory carries efforts (a plan on the
same model), they replace the inverse dynamics of the reference as feedforward:

    τ = τ_d + M(q) (k_d (q̇_d − q̇) + k_p (q_d − q)).

τ is then saturated at the effort limits.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.model.lagrangian import generalized_forces


class JointNamesError(InputError):
    """The trajectory's joint names do not name the model's joints (FollowJointTrajectory's INVALID_JOINTS)."""

#: a trajectory message with more points is refused (its spline and every sample would cost without bound)
MAX_POINTS = 10_000
#: |position| (rad or m) and |velocity| (rad/s or m/s) a knot may hold: beyond, the spline overflows and no
#: robot follows it anyway
MAX_KNOT_VALUE = 1e4


@dataclass(frozen=True)
class Reference:
    """Desired positions, velocities and accelerations at one instant, model joint order."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    effort: np.ndarray | None = None


class TrajectoryReference:
    """A joint trajectory as a function of time since its start (s), in the model's joint order."""

    def __init__(self, times: np.ndarray, positions: np.ndarray, velocities: np.ndarray | None,
                 efforts: np.ndarray | None = None):
        self.duration = float(times[-1])
        self._final = positions[-1]
        self._times = times
        self._efforts = efforts
        # imported here: scipy.interpolate takes ~0.8 s to import, which the arm's node would otherwise pay
        # at start-up before its first message (issue 10: first message within 2 s) for a trajectory it
        # may never receive
        from scipy.interpolate import CubicHermiteSpline, CubicSpline

        if times.size == 1:
            self._spline = None
        elif velocities is not None:
            self._spline = CubicHermiteSpline(times, positions, velocities, axis=0)
        else:
            self._spline = CubicSpline(times, positions, axis=0, bc_type="clamped")

    @classmethod
    def from_message_fields(cls, model_joints: Sequence[str], names: Sequence[str], times, positions,
                            velocities=None, current: np.ndarray | None = None,
                            efforts=None) -> "TrajectoryReference":
        """Validate a trajectory given in the order of ``names`` and reorder it to ``model_joints``.

        ``positions`` (and ``velocities`` and ``efforts``, each or None) are per knot in ``names`` order;
        ``current`` is the robot's position, prepended at t = 0 when the first knot comes later (with the
        first knot's effort). JointNamesError or InputError says what is wrong.
        """
        names = list(names)
        unknown = [name for name in names if name not in model_joints]
        if unknown:
            raise JointNamesError(f"trajectory: unknown joint name(s) {unknown}; the model's joints are "
                                  f"{list(model_joints)}")
        if len(set(names)) != len(names) or len(names) != len(model_joints):
            raise JointNamesError(f"trajectory: joint_names must name each of the model's joints "
                                  f"{list(model_joints)} exactly once, got {names}")
        order = [names.index(name) for name in model_joints]
        n = len(names)
        times = np.asarray(times, dtype=float)
        if times.size == 0:
            raise InputError("trajectory: no points")
        if times.size > MAX_POINTS:
            raise InputError(f"trajectory: {times.size} points, more than {MAX_POINTS}")
        if not np.all(np.isfinite(times)) or times[0] < 0.0 or np.any(np.diff(times) <= 0.0):
            raise InputError(f"trajectory: time_from_start must be finite, >= 0 and strictly increasing, "
                             f"got {times.tolist()}")
        positions = _knots(positions, times.size, n, "positions")[:, order]
        if velocities is not None:
            velocities = _knots(velocities, times.size, n, "velocities")[:, order]
        if efforts is not None:
            efforts = _knots(efforts, times.size, n, "effort")[:, order]
        if times[0] > 0.0 and current is not None:
            times = np.concatenate([[0.0], times])
            positions = np.vstack([current, positions])
            if velocities is not None:
                velocities = np.vstack([np.zeros(n), velocities])
            if efforts is not None:
                efforts = np.vstack([efforts[:1], efforts])
        return cls(times, positions, velocities, efforts)

    def sample(self, t: float) -> Reference:
        """The reference at time t since the start; the last knot at rest after the end."""
        effort = None
        if self._efforts is not None:
            effort = np.array([np.interp(t, self._times, column) for column in self._efforts.T])
        if self._spline is None or t >= self.duration:
            return Reference(self._final.copy(), np.zeros_like(self._final), np.zeros_like(self._final), effort)
        t = max(t, 0.0)
        return Reference(self._spline(t), self._spline(t, 1), self._spline(t, 2), effort)


def _knots(values, count: int, n: int, what: str) -> np.ndarray:
    rows = [np.asarray(v, dtype=float) for v in values]
    if len(rows) != count or any(row.shape != (n,) for row in rows):
        raise InputError(f"trajectory: every point needs {n} {what} (one per joint name), got "
                         f"{[row.size for row in rows]}")
    array = np.array(rows)
    if not np.all(np.isfinite(array)):
        raise InputError(f"trajectory: {what} must be finite")
    if np.any(np.abs(array) > MAX_KNOT_VALUE):
        raise InputError(f"trajectory: {what} must lie within ±{MAX_KNOT_VALUE:g}, got up to {np.abs(array).max():.3g}")
    return array


def tracking_torques(system, q: np.ndarray, qd: np.ndarray, reference: Reference, kp: float, kd: float,
                     effort_limits: np.ndarray) -> np.ndarray:
    """τ = ID(q, q̇, q̈_d + k_d (q̇_d − q̇) + k_p (q_d − q)), or with the reference's efforts τ_d as feedforward
    τ = τ_d + M(q) (k_d (q̇_d − q̇) + k_p (q_d − q)); saturated at ±effort_limits (N m or N)."""
    correction = kd * (reference.qd - qd) + kp * (reference.q - q)
    if reference.effort is not None:
        return saturate(reference.effort + system.mass_matrix(q) @ correction, effort_limits)
    return saturate(generalized_forces(system, q, qd, reference.qdd + correction), effort_limits)


def saturate(tau: np.ndarray, effort_limits: np.ndarray) -> np.ndarray:
    """τ clipped to ±effort_limits (inf = unlimited)."""
    return np.clip(tau, -effort_limits, effort_limits)
