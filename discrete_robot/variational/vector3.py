"""Cross product of two 3-vectors, for the inner loops of the Lie group integrators.

np.cross spends ~10 µs per call on axis handling for single 3-vectors, several times the arithmetic;
the integrators call it a few times per step for hundreds of thousands of steps.
"""

import numpy as np


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
