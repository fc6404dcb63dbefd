"""The support friction's inner loops as numba kernels (the math is in :mod:`.support`'s docstrings).

A push prediction evaluates the dissipated power and its derivatives a few dozen times on a handful of edges or a
few hundred points; numpy's per-call overhead was most of that cost (as in :mod:`discrete_robot.jit`).

- :func:`point_sums`: P, ∂P/∂ξ and ∂²P/∂ξ² of Σ_i w_i |v(r_i)| over support points;
- :func:`polygon_closed_form`: the same for a uniform pressure over a polygon, by the edge integrals of
  :class:`.support.UniformPolygonSupport`, about the center of rotation p = perp(v)/ω.

Both fill ``gradient`` (3,) and, with ``hessian``, ``matrix`` (3, 3), and return P.
"""

import numpy as np

from discrete_robot.jit import njit


@njit
def point_sums(x, y, weights, twist, hessian, rest, gradient, matrix):
    """Σ_i w_i |v_i| with v_i = v + ω perp(r_i); a point slower than ``rest`` (> 0) contributes v_i / rest to the
    unit velocity, an element of the subdifferential."""
    power = 0.0
    gradient[:] = 0.0
    if hessian:
        matrix[:] = 0.0
    for i in range(x.shape[0]):
        vx = twist[0] - twist[2] * y[i]
        vy = twist[1] + twist[2] * x[i]
        speed = np.hypot(vx, vy)
        inverse = 1.0 / max(speed, rest) if rest > 0.0 else 1.0 / speed
        ux, uy = vx * inverse, vy * inverse
        w = weights[i]
        power += w * speed
        gradient[0] += w * ux
        gradient[1] += w * uy
        gradient[2] += w * (x[i] * uy - y[i] * ux)
        if hessian:
            b0, b1, b2 = -uy, ux, x[i] * ux + y[i] * uy
            scale = w * inverse
            matrix[0, 0] += scale * b0 * b0
            matrix[0, 1] += scale * b0 * b1
            matrix[0, 2] += scale * b0 * b2
            matrix[1, 1] += scale * b1 * b1
            matrix[1, 2] += scale * b1 * b2
            matrix[2, 2] += scale * b2 * b2
    if hessian:
        matrix[1, 0], matrix[2, 0], matrix[2, 1] = matrix[0, 1], matrix[0, 2], matrix[1, 2]
    return power


@njit
def polygon_closed_form(ax, ay, tx, ty, lengths, area, tiny, twist, hessian, gradient, matrix):
    """Uniform pressure over the polygon with vertices (ax, ay) and unit edge directions (tx, ty) of ``lengths``:
    for each edge, h its signed distance from p (outward normal n = (t_y, −t_x)) and t0, t1 the coordinates of
    its ends along it, ∫_e |d| ds = ½ (t1 ρ1 − t0 ρ0 + h² (asinh(t1/|h|) − asinh(t0/|h|))); then
    P = |ω| ∫|d| dA / A with ∫|d| dA = ⅓ Σ h ∫_e |d| ds, and the gradient and Hessian as in the support
    docstring. ``tiny``: the |h| below which an edge's line passes through p (h asinh(t/|h|) → 0)."""
    omega = twist[2]
    px, py = -twist[1] / omega, twist[0] / omega
    count = ax.shape[0]
    distance_integral, ux, uy = 0.0, 0.0, 0.0
    total, lxnx, lyny, cross = 0.0, 0.0, 0.0, 0.0
    for e in range(count):
        following = e + 1 if e + 1 < count else 0
        nx, ny = ty[e], -tx[e]
        ox, oy = ax[e] - px, ay[e] - py
        h = ox * nx + oy * ny
        t0 = ox * tx[e] + oy * ty[e]
        t1 = t0 + lengths[e]
        root0 = np.hypot(ox, oy)
        root1 = np.hypot(ax[following] - px, ay[following] - py)
        size = max(abs(h), tiny)
        asinh = np.arcsinh(t1 / size) - np.arcsinh(t0 / size)
        line_abs = 0.5 * (t1 * root1 - t0 * root0 + h * h * asinh)
        distance_integral += h * line_abs
        ux += nx * line_abs
        uy += ny * line_abs
        if hessian:
            h_g = h * asinh
            along = root1 - root0
            lx, ly = h_g * nx + along * tx[e], h_g * ny + along * ty[e]
            total += h_g
            lxnx += lx * nx
            lyny += ly * ny
            cross += 0.5 * (lx * ny + ly * nx)
    distance_integral /= 3.0
    signed = (1.0 if omega > 0.0 else -1.0 if omega < 0.0 else 0.0) / area
    gradient[0] = -signed * uy
    gradient[1] = signed * ux
    gradient[2] = signed * (distance_integral + px * ux + py * uy)
    if hessian:
        # lever (3, 2) = [[1, 0], [0, 1], [−p_y, p_x]]; moment = ∫ d̂ d̂ᵀ/|d| dA; Hessian = lever moment leverᵀ/(A|ω|)
        m00, m01, m11 = total - lxnx, -cross, total - lyny
        scale = 1.0 / (area * abs(omega))
        lever = np.array([[1.0, 0.0], [0.0, 1.0], [-py, px]])
        for i in range(3):
            for j in range(3):
                matrix[i, j] = scale * (lever[i, 0] * (m00 * lever[j, 0] + m01 * lever[j, 1])
                                        + lever[i, 1] * (m01 * lever[j, 0] + m11 * lever[j, 1]))
    return abs(omega) * distance_integral / area


def warm_up() -> None:
    """Compile the kernels (make setup): a unit square, as points and as a polygon, with and without Hessian."""
    x, y = np.array([0.0, 1.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0, 1.0])
    twist, gradient, matrix = np.array([0.1, 0.2, 1.0]), np.empty(3), np.empty((3, 3))
    for hessian in (False, True):
        point_sums(x, y, np.full(4, 0.25), twist, hessian, 0.0, gradient, matrix)
        polygon_closed_form(x, y, np.array([1.0, 0.0, -1.0, 0.0]), np.array([0.0, 1.0, 0.0, -1.0]), np.ones(4), 1.0,
                            1e-150, twist, hessian, gradient, matrix)
