"""The one home of the 3-D rotation primitives: hat map, cross product, quaternions, SO(3) exponential.

Every function is compiled with numba (:mod:`discrete_robot.jit`), so the same code serves
Python callers and the compiled kernels (the space-robot recursions, the Lie-group
integrators). They are written out rather than taken from transforms3d because nothing
from a Python library can be called inside a compiled kernel; transforms3d remains the
library for conversions outside the hot loops (Euler angles, axis-angle decompositions).

Conventions: vectors of shape (3,), rotation matrices (3, 3) mapping body to world
components, quaternions [w, x, y, z] (transforms3d's and, after reordering, ROS's order),
angles in radians.
"""

import math

import numpy as np

from discrete_robot.jit import njit, overload

_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0
#: hat(v)[i, k] = ε_ijk v_j, as one product v @ _HAT reshaped (fewer numpy calls than element assignment)
_HAT = _LEVI_CIVITA.transpose(1, 0, 2).reshape(3, 9)
_EYE3 = np.eye(3)


def hat(v: np.ndarray) -> np.ndarray:
    """Hat map: the 3x3 matrix [v]ₓ with [v]ₓ u = v × u, for v of shape (..., 3) -> (..., 3, 3).

    In Python it is batched (numpy); inside a kernel it takes one vector (its compiled form below)."""
    return (v @ _HAT).reshape(v.shape[:-1] + (3, 3))


@njit(allocates=False)
def hat_into(v, out):
    """:func:`hat` of one vector into ``out`` (3×3), for kernels that reuse their workspace."""
    out[0, 0], out[0, 1], out[0, 2] = 0.0, -v[2], v[1]
    out[1, 0], out[1, 1], out[1, 2] = v[2], 0.0, -v[0]
    out[2, 0], out[2, 1], out[2, 2] = -v[1], v[0], 0.0


@overload(hat)
def _hat_compiled(v):
    """The compiled :func:`hat` of one vector (numba's implementation of the Python function above)."""
    def implementation(v):
        out = np.empty((3, 3))
        hat_into(v, out)
        return out
    return implementation


@njit
def vee(S: np.ndarray) -> np.ndarray:
    """Vee map, the inverse of :func:`hat` (of the skew-symmetric part of S)."""
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (broadcasting); np.cross is several times slower on small batches.

    Component by component, so one vector gives bit for bit what the compiled form below gives."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


@overload(cross)
def _cross_compiled(a, b):
    """The compiled :func:`cross` of two vectors of shape (3,)."""
    def implementation(a, b):
        out = np.empty(3)
        cross_into(a, b, out)
        return out
    return implementation


@njit
def solve3(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b for a 3×3 A by the adjugate: A⁻¹ has rows (c1×c2, c2×c0, c0×c1)/det(A), c_i columns of A.

    The Newton loops here solve well-conditioned 3×3 systems (dominated by an inertia matrix);
    LAPACK's dispatch would cost several times the arithmetic.
    """
    c0, c1, c2 = A[:, 0].copy(), A[:, 1].copy(), A[:, 2].copy()
    r0, r1, r2 = cross(c1, c2), cross(c2, c0), cross(c0, c1)
    return np.array([r0 @ b, r1 @ b, r2 @ b]) / (c0 @ r0)


def rotation_about(axis: np.ndarray, angle) -> np.ndarray:
    """Rotation by ``angle`` (rad) about ``axis`` (Rodrigues): I + sin θ K + (1 − cos θ) K², K = [a]ₓ; a unit
    axis gives the rotation, a zero axis the identity (a prismatic joint's).

    In Python it is batched (numpy): axis (..., 3) and angle (...) broadcast to (..., 3, 3). Inside a kernel it
    takes one axis and one angle (its compiled form below: :func:`rotation_into`, the same formula entry by
    entry with K² = a aᵀ − |a|² I, equal to round-off)."""
    axis, angle = np.asarray(axis, dtype=float), np.asarray(angle, dtype=float)
    K = hat(axis)
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    return _EYE3 + s * K + (1.0 - c) * (K @ K)


@overload(rotation_about)
def _rotation_about_compiled(axis, angle):
    """The compiled :func:`rotation_about` of one axis (3,) and one angle."""
    def implementation(axis, angle):
        out = np.empty((3, 3))
        rotation_into(axis, angle, out)
        return out
    return implementation


@njit(allocates=False)
def rotation_into(axis, angle, out):
    """:func:`rotation_about` into ``out`` (3×3), entry by entry: [a]ₓ² = a aᵀ − |a|² E for the unit axis."""
    rotation_from_sine_into(axis, math.sin(angle), 1.0 - math.cos(angle), out)


@njit(allocates=False)
def rotation_from_sine_into(axis, s, v, out):
    """:func:`rotation_into` from s = sin θ and v = 1 − cos θ (a caller that has them already): E + the turn
    (:func:`turn_from_sine_into`; 1 + (−x) is 1 − x, bit for bit)."""
    turn_from_sine_into(axis, s, v, out)
    for i in range(3):
        out[i, i] += 1.0


@njit(allocates=False)
def turn_from_sine_into(axis, s, v, out):
    """Rot(axis, θ) − E = s [a]ₓ + v [a]ₓ² (s = sin θ, v = 1 − cos θ, unit axis) into ``out`` (3×3): how far each
    vector turns, every entry of the size of θ (no 1 − 1 on the diagonal to cancel)."""
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0], out[0, 1], out[0, 2] = -v * (y * y + z * z), -s * z + v * x * y, s * y + v * x * z
    out[1, 0], out[1, 1], out[1, 2] = s * z + v * x * y, -v * (x * x + z * z), -s * x + v * y * z
    out[2, 0], out[2, 1], out[2, 2] = -s * y + v * x * z, s * x + v * y * z, -v * (x * x + y * y)


@njit
def so3_exp(omega: np.ndarray) -> np.ndarray:
    """Exponential map of so(3): the rotation by |ω| radians about ω."""
    angle = math.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    if angle < 1e-300:
        return np.eye(3)
    return rotation_about(omega / angle, angle)


@njit
def quaternion_to_matrix_unnormalised(quaternion: np.ndarray) -> np.ndarray:
    """The unit-quaternion formula (w² − |u|²) I + 2 u uᵀ + 2 w [u]ₓ applied as is to q = [w, u].

    For a unit q it is the rotation matrix; for any other q it is that rotation scaled by |q|², which
    is how the norm drift of an integrated quaternion shows as an orthogonality error (transforms3d's
    quat2mat divides by |q|² and would hide it).
    """
    out = np.empty((3, 3))
    _quaternion_formula_into(quaternion[0], quaternion[1], quaternion[2], quaternion[3], out)
    return out


@njit(allocates=False)
def _quaternion_formula_into(w, x, y, z, out):
    """The formula of :func:`quaternion_to_matrix_unnormalised` for q = [w, x, y, z], into ``out`` (3×3)."""
    out[0, 0], out[0, 1], out[0, 2] = w * w + x * x - y * y - z * z, 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)
    out[1, 0], out[1, 1], out[1, 2] = 2.0 * (x * y + w * z), w * w - x * x + y * y - z * z, 2.0 * (y * z - w * x)
    out[2, 0], out[2, 1], out[2, 2] = 2.0 * (x * z - w * y), 2.0 * (y * z + w * x), w * w - x * x - y * y + z * z


@njit
def quaternion_to_matrix(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of the unit quaternion q / |q| (normalised first, so round-off never skews it)."""
    out = np.empty((3, 3))
    quaternion_to_matrix_into(quaternion, out)
    return out


@njit(allocates=False)
def quaternion_to_matrix_into(quaternion, out):
    """:func:`quaternion_to_matrix` into ``out`` (3×3)."""
    w, x, y, z = quaternion[0], quaternion[1], quaternion[2], quaternion[3]
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    _quaternion_formula_into(w / norm, x / norm, y / norm, z / norm, out)


@njit
def matrix_to_quaternion(R: np.ndarray) -> np.ndarray:
    """The unit quaternion [w, x, y, z] (w ≥ 0) of a rotation matrix, by Shepperd's method: the largest of
    4w², 4x², 4y², 4z² (from the trace and the diagonal) is the pivot, the other components come from the
    off-diagonal sums and differences over it.

    Written here rather than taken from transforms3d: its ``mat2quat`` solves a 4x4 symmetric eigenproblem
    (tens of µs per call), and the simulators convert every link's rotation for /tf at their publish rate.
    """
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    pivots = np.array([trace, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(pivots))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    elif k == 1:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = np.array([(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s])
    elif k == 2:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = np.array([(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s])
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = np.array([(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s])
    q /= math.sqrt(q @ q)
    return -q if q[0] < 0.0 else q


@njit
def quaternion_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product p q of quaternions [w, x, y, z] (the rotation q first, then p)."""
    out = np.empty(4)
    quaternion_multiply_into(p, q, out)
    return out


@njit(allocates=False)
def quaternion_multiply_into(p, q, out):
    """:func:`quaternion_multiply` into ``out`` (4,; it must not alias p or q)."""
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    out[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2]
    out[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1]
    out[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]


@njit
def quaternion_exp(theta: np.ndarray) -> np.ndarray:
    """Unit quaternion [cos(|θ|/2), sin(|θ|/2) θ/|θ|] of the rotation vector θ (rad): exact for any angle.

    Below 1e-12 rad the first-order form [1, θ/2], normalised, avoids dividing by |θ|.
    """
    out = np.empty(4)
    quaternion_exp_into(theta, out)
    return out


@njit(allocates=False)
def quaternion_exp_into(theta, out):
    """:func:`quaternion_exp` into ``out`` (4,)."""
    angle = math.sqrt(theta[0] ** 2 + theta[1] ** 2 + theta[2] ** 2)
    if angle < 1e-12:
        scale = 1.0 / math.sqrt(1.0 + 0.25 * angle ** 2)
        out[0], out[1], out[2], out[3] = scale, 0.5 * theta[0] * scale, 0.5 * theta[1] * scale, \
            0.5 * theta[2] * scale
        return
    s = math.sin(0.5 * angle) / angle
    out[0], out[1], out[2], out[3] = math.cos(0.5 * angle), s * theta[0], s * theta[1], s * theta[2]


@njit(allocates=False)
def right_jacobian_inverse_into(theta, omega, out):
    """θ̇ = J_r(θ)⁻¹ ω into ``out`` (3,; it must not alias θ or ω): with R = R_n exp([θ]ₓ) and the body angular
    velocity ω (rad/s), the rate of the rotation vector θ (rad) of SO(3).

    J_r⁻¹ = I + ½[θ]ₓ + (1/|θ|² − (1 + cos|θ|)/(2|θ| sin|θ|)) [θ]ₓ², applied as ω + ½ θ×ω + c θ×(θ×ω) (two cross
    products, no matrix); c → 1/12 as θ → 0 (its series 1/12 + |θ|²/720 is used below 1e-4 rad, where the closed
    form loses digits).
    """
    angle = math.sqrt(theta[0] ** 2 + theta[1] ** 2 + theta[2] ** 2)
    if angle < 1e-4:
        c = 1.0 / 12.0 + angle ** 2 / 720.0
    else:
        c = 1.0 / angle ** 2 - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))
    # the two cross products written out, not cross_into: θ × ω feeds the second one, and kept as scalars it needs
    # no workspace argument (cross_into's output must not alias its inputs)
    t0, t1, t2 = theta[0], theta[1], theta[2]
    x0, x1, x2 = t1 * omega[2] - t2 * omega[1], t2 * omega[0] - t0 * omega[2], t0 * omega[1] - t1 * omega[0]
    out[0] = omega[0] + 0.5 * x0 + c * (t1 * x2 - t2 * x1)
    out[1] = omega[1] + 0.5 * x1 + c * (t2 * x0 - t0 * x2)
    out[2] = omega[2] + 0.5 * x2 + c * (t0 * x1 - t1 * x0)


# In-place 3x3 products for the compiled kernels: the recursions run them a few hundred times per evaluation,
# and an allocating `A @ B` (which numba sends to BLAS) costs more than its 27 multiply-adds. Compiled without
# numba's runtime (no reference counting: discrete_robot.jit.njit), as the rigid-body terms that call them.


@njit(allocates=False)
def mat_mul(A, B, out):
    """out = A B (3x3)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(allocates=False)
def mat_mul_add(A, B, out):
    """out += A B (3x3)."""
    for i in range(3):
        for j in range(3):
            out[i, j] += A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(allocates=False)
def mat_vec_add(A, v, out):
    """out += A v (3x3 by 3)."""
    for i in range(3):
        out[i] += A[i, 0] * v[0] + A[i, 1] * v[1] + A[i, 2] * v[2]


@njit(allocates=False)
def mat_t_vec(A, v, out):
    """out = Aᵀ v (3x3 by 3)."""
    for i in range(3):
        out[i] = A[0, i] * v[0] + A[1, i] * v[1] + A[2, i] * v[2]


@njit(allocates=False)
def cross_add(a, b, out):
    """out += a × b."""
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


@njit(allocates=False)
def mat_vec(A, v, out):
    """out = A v (3x3 by 3; out must not alias v)."""
    for i in range(3):
        out[i] = A[i, 0] * v[0] + A[i, 1] * v[1] + A[i, 2] * v[2]


@njit(allocates=False)
def cross_into(a, b, out):
    """out = a × b (out must not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(allocates=False)
def copy_into(source, out):
    """out[:] = source for a vector, element by element: in a kernel compiled without numba's runtime
    (:func:`discrete_robot.jit.njit`'s ``allocates=False``), where array assignment is refused."""
    for i in range(source.shape[0]):
        out[i] = source[i]


@njit(allocates=False)
def matrix_copy_into(source, out):
    """out[:] = source for a matrix (as :func:`copy_into`)."""
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            out[i, j] = source[i, j]
