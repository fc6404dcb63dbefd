"""Joint-trajectory references: a trajectory's points joined as joint_trajectory_controller joins them.

A trajectory (knot times, positions and optionally velocities, accelerations and efforts per knot, in the
model's joint order) becomes a reference interpolated segment by segment as ros2_controllers'
joint_trajectory_controller does (``splines``; trajectory.cpp, ``interpolate_between_points``): between two
knots that both carry accelerations (and velocities) a quintic, between two that both carry velocities a
cubic (Hermite), otherwise a straight line; efforts, where both knots have them, linearly. Before the first
knot the reference holds the first knot; after the last it holds the last knot as given (its velocities and
accelerations, zero where it has none). Interpolation ``none`` forwards the next knot instead (JTC's ``none``).
The owner of the reference prepends the robot's state as the knot the motion starts from (see
discrete_robot.control.joint_trajectory_controller); discrete_robot.control.computed_torque tracks it.
"""

import enum
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError


class JointNamesError(InputError):
    """The trajectory's joint names do not name the model's joints (FollowJointTrajectory's INVALID_JOINTS)."""


class Interpolation(enum.Enum):
    """joint_trajectory_controller's ``interpolation_method`` (interpolation_methods.hpp)."""

    SPLINES = "splines"
    NONE = "none"


#: a trajectory message with more points is refused (its reference and every sample would cost without bound)
MAX_POINTS = 10_000
#: |position| (rad or m) and |velocity| (rad/s or m/s) a knot may hold: beyond, the polynomials overflow and no
#: robot follows them anyway
MAX_KNOT_VALUE = 1e4


@dataclass(frozen=True)
class Reference:
    """Desired positions, velocities and accelerations at one instant, model joint order; ``index`` is the
    knot the reference is heading for (the number of knots once past the last), as JTC's feedback counts."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    effort: np.ndarray | None = None
    index: int = 0


def segment_coefficients(duration: np.ndarray, p0, v0, a0, p1, v1, a1, degree: np.ndarray) -> np.ndarray:
    """Polynomial coefficients c_0..c_5 (p(τ) = Σ c_j τ^j, τ in s since the segment's start) of each segment.

    ``duration`` (segments,), the boundary values (segments, n) and ``degree`` (segments,) 1, 3 or 5:
    1 joins p0 to p1 at constant velocity; 3 also matches v0, v1 (Hermite); 5 also a0, a1. The quintic's
    coefficients solve the 3×3 system of p, ṗ, p̈ at τ = T with c_0 = p0, c_1 = v0, c_2 = a0 / 2:
    c_3 = (20 Δ − (8 v1 + 12 v0) T − (3 a0 − a1) T²) / (2 T³),
    c_4 = (−30 Δ + (14 v1 + 16 v0) T + (3 a0 − 2 a1) T²) / (2 T⁴),
    c_5 = (12 Δ − 6 (v1 + v0) T + (a1 − a0) T²) / (2 T⁵), Δ = p1 − p0.
    """
    T = duration[:, None]
    delta = p1 - p0
    c = np.zeros((duration.size, 6, p0.shape[1]))
    c[:, 0] = p0
    line = degree == 1
    c[line, 1] = delta[line] / T[line]
    cubic = degree == 3
    Tc = T[cubic]
    c[cubic, 1] = v0[cubic]
    c[cubic, 2] = (3.0 * delta[cubic] - (2.0 * v0[cubic] + v1[cubic]) * Tc) / Tc ** 2
    c[cubic, 3] = (-2.0 * delta[cubic] + (v0[cubic] + v1[cubic]) * Tc) / Tc ** 3
    quintic = degree == 5
    Tq, d, v0q, v1q, a0q, a1q = T[quintic], delta[quintic], v0[quintic], v1[quintic], a0[quintic], a1[quintic]
    c[quintic, 1] = v0q
    c[quintic, 2] = 0.5 * a0q
    c[quintic, 3] = (20.0 * d - (8.0 * v1q + 12.0 * v0q) * Tq - (3.0 * a0q - a1q) * Tq ** 2) / (2.0 * Tq ** 3)
    c[quintic, 4] = (-30.0 * d + (14.0 * v1q + 16.0 * v0q) * Tq + (3.0 * a0q - 2.0 * a1q) * Tq ** 2) / (2.0 * Tq ** 4)
    c[quintic, 5] = (12.0 * d - 6.0 * (v1q + v0q) * Tq + (a1q - a0q) * Tq ** 2) / (2.0 * Tq ** 5)
    return c


class TrajectoryReference:
    """A joint trajectory as a function of time (s, on the clock its knot ``times`` are given in).

    ``positions`` (knots, n); ``velocities``, ``accelerations`` and ``efforts`` each None (no knot has them) or
    (knots, n) with NaN rows where a knot has none; a segment's degree follows what both its knots carry.
    """

    def __init__(self, times: np.ndarray, positions: np.ndarray, velocities: np.ndarray | None = None,
                 efforts: np.ndarray | None = None, accelerations: np.ndarray | None = None,
                 interpolation: Interpolation = Interpolation.SPLINES):
        times = np.asarray(times, dtype=float)
        positions = np.asarray(positions, dtype=float)
        self.times = times
        self.start, self.end = float(times[0]), float(times[-1])
        self.duration = self.end - self.start
        self.interpolation = interpolation
        knots, n = positions.shape

        def known(values):
            return (np.zeros(knots, dtype=bool), np.zeros((knots, n))) if values is None else (
                ~np.isnan(np.asarray(values, dtype=float)).any(axis=1), np.nan_to_num(np.asarray(values, float)))

        has_velocity, self._velocities = known(velocities)
        has_acceleration, self._accelerations = known(accelerations)
        has_effort, efforts = known(efforts)
        self._positions = positions
        self._efforts = efforts if has_effort.all() else None
        # JTC's branches: velocities at both ends -> cubic, and accelerations too -> quintic, else linear; a
        # segment with accelerations but no velocities gets no branch there (zeros): linear here
        both_velocity = has_velocity[:-1] & has_velocity[1:]
        degree = np.where(both_velocity & has_acceleration[:-1] & has_acceleration[1:], 5,
                          np.where(both_velocity, 3, 1))
        v, a = self._velocities, self._accelerations
        self._coefficients = segment_coefficients(np.diff(times), positions[:-1], v[:-1], a[:-1], positions[1:],
                                                  v[1:], a[1:], degree)

    def sample(self, t: float) -> Reference:
        """The reference at time t: the knot ahead before the first, the last knot as given after the last."""
        times = self.times
        if t >= self.end or times.size == 1:
            last = times.size - 1
            return Reference(self._positions[last].copy(), self._velocities[last].copy(),
                             self._accelerations[last].copy(), self._effort(last, 0.0), times.size)
        if t < self.start:
            return Reference(self._positions[0].copy(), self._velocities[0].copy(), self._accelerations[0].copy(),
                             self._effort(0, 0.0), 0)
        k = int(np.searchsorted(times, t, side="right")) - 1
        if self.interpolation is Interpolation.NONE:
            return Reference(self._positions[k + 1].copy(), self._velocities[k + 1].copy(),
                             self._accelerations[k + 1].copy(), self._effort(k + 1, 0.0), k + 1)
        tau = t - times[k]
        c = self._coefficients[k]
        q = c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))))
        qd = c[1] + tau * (2.0 * c[2] + tau * (3.0 * c[3] + tau * (4.0 * c[4] + tau * 5.0 * c[5])))
        qdd = 2.0 * c[2] + tau * (6.0 * c[3] + tau * (12.0 * c[4] + tau * 20.0 * c[5]))
        return Reference(q, qd, qdd, self._effort(k, tau / (times[k + 1] - times[k])), k + 1)

    def _effort(self, k: int, fraction: float) -> np.ndarray | None:
        """The efforts a fraction of the way from knot k to k + 1 (linear), or None without efforts."""
        if self._efforts is None:
            return None
        if fraction == 0.0:
            return self._efforts[k].copy()
        return (1.0 - fraction) * self._efforts[k] + fraction * self._efforts[k + 1]
