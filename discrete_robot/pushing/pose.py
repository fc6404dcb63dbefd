"""Planar poses (x, y, θ) of a pushed object in the world (m, rad): frame changes and the exact step under a
constant twist. Geometry, at the bottom of pushing/'s order with :mod:`.polygon` (docs/pushing.md).
"""

import numpy as np

from discrete_robot.geometry2d import rotation2d


def to_object(pose: np.ndarray, point: np.ndarray) -> np.ndarray:
    """World point -> object frame: R(θ)ᵀ (p − (x, y))."""
    return rotation2d(pose[2]).T @ (np.asarray(point, dtype=float)[:2] - pose[:2])


def to_world(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Object-frame points (m, 2) -> world: R(θ) r + (x, y), row by row."""
    return np.asarray(points, dtype=float) @ rotation2d(pose[2]).T + pose[:2]


def se2_exp_step(pose: np.ndarray, twist: np.ndarray) -> np.ndarray:
    """The pose after moving for unit time with the constant object-frame twist (v_x, v_y, omega) (exact: the
    SE(2) exponential, with its series to first order in omega below 1e-12 rad)."""
    v, omega = twist[:2], float(twist[2])
    if abs(omega) < 1e-12:
        displacement = v + 0.5 * omega * np.array([-v[1], v[0]])
    else:
        s, c = np.sin(omega), np.cos(omega)
        displacement = np.array([[s, c - 1.0], [1.0 - c, s]]) @ v / omega
    return np.array([*(pose[:2] + rotation2d(pose[2]) @ displacement), pose[2] + omega])
