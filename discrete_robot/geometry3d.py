"""Small 3-D rotation helpers shared by the capabilities.

Rotations and quaternions come from transforms3d; what is here is only the
few matrix identities transforms3d does not offer (the hat map and its inverse).
Quaternions are [w, x, y, z] throughout, as transforms3d and ROS messages
(after reordering) use.
"""

import numpy as np
from transforms3d.axangles import axangle2mat


def skew(v: np.ndarray) -> np.ndarray:
    """Hat map: the 3x3 matrix S(v) with S(v) @ u = v x u."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def unskew(S: np.ndarray) -> np.ndarray:
    """Vee map, the inverse of :func:`skew` (uses the skew part of S)."""
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` radians about the unit ``axis`` (Rodrigues)."""
    return axangle2mat(axis, angle, is_normalized=True)


def so3_exp(omega: np.ndarray) -> np.ndarray:
    """Exponential map of so(3): the rotation by |omega| radians about omega."""
    angle = float(np.linalg.norm(omega))
    if angle < 1e-300:
        return np.eye(3)
    return axangle2mat(omega / angle, angle, is_normalized=True)
