"""Small 3-D rotation helpers shared by the capabilities.

Rotations and quaternions come from transforms3d; what is here is only the
few matrix identities transforms3d does not offer (the hat map and its inverse),
and written-out single-vector kernels for inner loops: np.cross spends ~10-30 µs
per call on axis handling for one pair of 3-vectors and np.linalg.solve ~12 µs of
LAPACK dispatch per 3x3 system, several times the arithmetic, and the Lie-group
integrators and the space-robot recursions call them for every body at every step.
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


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b for two vectors of shape (3,)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def solve3(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b for a 3×3 A, by the adjugate: A⁻¹ has rows (c1×c2, c2×c0, c0×c1)/det(A), c_i columns of A.

    np.linalg.solve costs ~12 µs per 3×3 call (LAPACK dispatch); the Newton loops here solve well-conditioned
    3×3 systems (dominated by the inertia matrix) several times a step.
    """
    c0, c1, c2 = A[:, 0], A[:, 1], A[:, 2]
    r0, r1, r2 = cross3(c1, c2), cross3(c2, c0), cross3(c0, c1)
    return np.array([r0 @ b, r1 @ b, r2 @ b]) / (c0 @ r0)
