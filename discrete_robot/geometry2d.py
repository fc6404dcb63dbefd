"""The one home of the planar primitives: the perpendicular, the planar cross product, angle wrapping,
the 2-D rotation matrix, planar poses (frame changes and the SE(2) exponential) and the yaw quaternion.

Planar poses (x, y, θ) are the pushing world's (the table plane, REP 103: z up, θ counter-clockwise
about z); in 3-D they are the rotation by θ about z, whose unit quaternion [w, x, y, z] (geometry3d's
order) is [cos θ/2, 0, 0, sin θ/2]. Lengths in metres, angles in radians.

:func:`perp`, :func:`cross2`, :func:`wrap_angle`, :func:`to_object` and :func:`se2_exp_step` serve Python
callers (batched, numpy) and the compiled kernels (one vector, angle or pose): as in
:mod:`discrete_robot.geometry3d`, each has a compiled form (``overload``) that numba uses when a kernel calls the
Python function, written with the same arithmetic so both give the same numbers. The compiled poses and points
are tuples (no allocation in a kernel's loop).
"""

import math

import numpy as np

from discrete_robot.jit import overload


def perp(vectors: np.ndarray) -> np.ndarray:
    """The vector(s) turned +90°: perp(x, y) = (−y, x), over the last axis. perp(r) · f = r × f is the moment
    about the origin of a force f at r (N·m), and v + ω perp(r) the velocity at r of a plane twist (v, ω) (m/s)."""
    vectors = np.asarray(vectors, dtype=float)
    if vectors.ndim == 1:       # one vector: numpy's general path below costs most on the smallest case
        return np.array((-vectors[1], vectors[0]))
    turned = np.empty_like(vectors)
    turned[..., 0] = -vectors[..., 1]
    turned[..., 1] = vectors[..., 0]
    return turned


@overload(perp)
def _perp_compiled(vectors):
    """The compiled :func:`perp` of one vector of shape (2,)."""
    def implementation(vectors):
        return np.array((-vectors[1], vectors[0]))
    return implementation


def cross2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b = a_x b_y − a_y b_x, the z component of the planar cross product, over the last axis (m² for two
    positions; N·m for a lever arm and a force)."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


@overload(cross2)
def _cross2_compiled(a, b):
    """The compiled :func:`cross2` of two vectors of shape (2,)."""
    def implementation(a, b):
        return a[0] * b[1] - a[1] * b[0]
    return implementation


def wrap_angle(angle):
    """The angle (rad, scalar or array) moved by whole turns into (−π, π]: π − ((π − angle) mod 2π).

    A float for a scalar, an array for an array. Note the half-open end: +π stays +π, −π becomes +π."""
    wrapped = np.pi - np.mod(np.pi - np.asarray(angle, dtype=float), 2.0 * np.pi)
    return float(wrapped) if wrapped.ndim == 0 else wrapped


@overload(wrap_angle)
def _wrap_angle_compiled(angle):
    """The compiled :func:`wrap_angle` of one angle."""
    def implementation(angle):
        return np.pi - np.mod(np.pi - angle, 2.0 * np.pi)
    return implementation


def rotation2d(angle: float) -> np.ndarray:
    """R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]: turns a plane vector by ``angle`` rad counter-clockwise."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def to_object(pose: np.ndarray, point: np.ndarray) -> np.ndarray:
    """World point -> the frame of ``pose`` (x, y, θ): R(θ)ᵀ (p − (x, y)), m."""
    return rotation2d(pose[2]).T @ (np.asarray(point, dtype=float)[:2] - pose[:2])


@overload(to_object)
def _to_object_compiled(pose, point):
    """The compiled :func:`to_object` of one point given as a tuple (x, y): the tuple (x, y) in the pose's frame."""
    def implementation(pose, point):
        c, s = math.cos(pose[2]), math.sin(pose[2])
        dx, dy = point[0] - pose[0], point[1] - pose[1]
        return c * dx + s * dy, -s * dx + c * dy
    return implementation


def to_world(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points (k, 2) in the frame of ``pose`` (x, y, θ) -> world: R(θ) r + (x, y), row by row, m."""
    return np.asarray(points, dtype=float) @ rotation2d(pose[2]).T + pose[:2]


def se2_exp_step(pose: np.ndarray, twist: np.ndarray) -> np.ndarray:
    """The pose after moving for unit time with the constant twist (v_x, v_y, ω) (m/s, rad/s) in the frame of
    ``pose``: the SE(2) exponential, exact, with its series to first order in ω below 1e-12 rad."""
    v, omega = twist[:2], float(twist[2])
    if abs(omega) < 1e-12:
        displacement = v + 0.5 * omega * np.array([-v[1], v[0]])
    else:
        s, c = np.sin(omega), np.cos(omega)
        displacement = np.array([[s, c - 1.0], [1.0 - c, s]]) @ v / omega
    return np.array([*(pose[:2] + rotation2d(pose[2]) @ displacement), pose[2] + omega])


@overload(se2_exp_step)
def _se2_exp_step_compiled(pose, twist):
    """The compiled :func:`se2_exp_step`: the new pose as a tuple (x, y, θ)."""
    def implementation(pose, twist):
        vx, vy, omega = twist[0], twist[1], twist[2]
        if abs(omega) < 1e-12:
            dx, dy = vx + 0.5 * omega * -vy, vy + 0.5 * omega * vx
        else:
            s, c = math.sin(omega), math.cos(omega)
            dx, dy = (s * vx + (c - 1.0) * vy) / omega, ((1.0 - c) * vx + s * vy) / omega
        c, s = math.cos(pose[2]), math.sin(pose[2])
        return pose[0] + (c * dx - s * dy), pose[1] + (s * dx + c * dy), pose[2] + omega
    return implementation


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """The unit quaternion (w, x, y, z) = (cos θ/2, 0, 0, sin θ/2) of the rotation by ``yaw`` rad about z."""
    return float(np.cos(yaw / 2.0)), 0.0, 0.0, float(np.sin(yaw / 2.0))


def yaw_of_quaternion(w: float, z: float) -> float:
    """θ = 2 atan2(z, w) of a rotation about z alone, given its quaternion's w and z, in (−2π, 2π]
    (callers wrap it as they need: the angle, not the equivalence class)."""
    return float(2.0 * np.arctan2(z, w))
