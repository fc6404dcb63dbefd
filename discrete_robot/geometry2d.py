"""The one home of the planar rotation primitives: the 2-D rotation matrix and the yaw quaternion.

Planar poses (x, y, θ) are the pushing world's (the table plane, REP 103: z up, θ counter-clockwise
about z); in 3-D they are the rotation by θ about z, whose unit quaternion [w, x, y, z] (geometry3d's
order) is [cos θ/2, 0, 0, sin θ/2]. Plain numpy: no kernel uses them.
"""

import numpy as np


def rotation2d(angle: float) -> np.ndarray:
    """R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]: turns a plane vector by ``angle`` rad counter-clockwise."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """The unit quaternion (w, x, y, z) = (cos θ/2, 0, 0, sin θ/2) of the rotation by ``yaw`` rad about z."""
    return float(np.cos(yaw / 2.0)), 0.0, 0.0, float(np.sin(yaw / 2.0))


def yaw_of_quaternion(w: float, z: float) -> float:
    """θ = 2 atan2(z, w) of a rotation about z alone, given its quaternion's w and z, in (−2π, 2π]
    (callers wrap it as they need: the angle, not the equivalence class)."""
    return float(2.0 * np.arctan2(z, w))
