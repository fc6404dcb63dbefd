"""The support friction's inner loops, and the prediction's two solvers around them, as numba kernels (the math
is in :mod:`.support`'s and :mod:`.prediction`'s docstrings). Imports nothing of :mod:`discrete_robot.pushing`:
the support classes build a :class:`Model` and hand it here.

A push prediction evaluates the dissipated power and its derivatives a few dozen times on a handful of edges or a
few hundred points; numpy's per-call overhead was most of that cost (as in :mod:`discrete_robot.jit`), and then
the Python of the solvers' loops around them.

- :class:`Model`: a support as the kernels take it, built by :func:`points_model` or :func:`polygon_model`;
- :func:`point_sums`: P, ∂P/∂ξ and ∂²P/∂ξ² of Σ_i w_i |v(r_i)| over support points;
- :func:`polygon_closed_form`: the same for a uniform pressure over a polygon, by the edge integrals of
  :class:`.support.UniformPolygonSupport`, about the center of rotation p = perp(v)/ω;
- :func:`dissipation`: either, for a support's :class:`Model`;
- :func:`sticking_rotation`: the sticking motion's rotation rate, the root of the power's slope along a line of
  twists (safeguarded Newton);
- :func:`newton_on_plane`: the least power on the plane W · ξ = 1 (damped Newton), the sliding motion;
- :func:`force_in_cone`, :func:`sliding_motion`: the contact modes' tests and the sliding motion's scaling.

The power kernels fill ``gradient`` (3,) and, with ``hessian``, ``matrix`` (3, 3), and return P. Usage::

    model = points_model(x, y, weights, rest=1e-13, reach=1.0)
    gradient, matrix = np.empty(3), np.empty((3, 3))
    power = dissipation(model, np.array([0.0, 1.0, 0.5]), True, gradient, matrix)
"""

import math
from typing import NamedTuple

import numpy as np

from discrete_robot.jit import njit

POINTS, POLYGON = 0, 1
_NONE = np.empty(0)


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


@njit
def force_in_cone(start, end, normal, left, mu, cone_tolerance, force_rounding, force):
    """A force of the segment [start, end] inside the friction cone |f · t| ≤ μ f · n (t = ``left``), the middle
    of the part inside, into ``force``; returns whether there is one. The cone is widened to ``cone_tolerance``
    of the friction bound μ f_n, plus the rounding of f (``force_rounding`` |f|): not ``cone_tolerance`` |f|,
    which for μ -> 0 would call a force with |f · t| ~ 1e-9 |f| sticking where the cone is (nearly) the normal
    alone."""
    rounding = force_rounding * max(math.hypot(start[0], start[1]), math.hypot(end[0], end[1]))
    widened = (1.0 + cone_tolerance) * mu
    dx, dy = end[0] - start[0], end[1] - start[1]
    low, high = 0.0, 1.0
    for side in (0.0, -1.0, 1.0):        # the half-planes f · n ≥ 0 and (μ n ∓ t) · f ≥ 0
        scale = 1.0 if side == 0.0 else widened
        ax, ay = scale * normal[0] + side * left[0], scale * normal[1] + side * left[1]
        value, rate = start[0] * ax + start[1] * ay + rounding, dx * ax + dy * ay
        if abs(rate) <= 1e-300:
            if value < 0.0:
                return False
        elif rate > 0.0:
            low = max(low, -value / rate)
        else:
            high = min(high, -value / rate)
    if low > high:
        return False
    middle = 0.5 * (low + high)
    force[0], force[1] = start[0] + middle * dx, start[1] + middle * dy
    return True


OK, NO_APPROACH, WRONG_SLIP = range(3)


@njit
def sliding_motion(twist, load, c, normal, left, direction, side, edge, out_twist, force):
    """The sliding motion from the least-power twist ``twist`` on W · ξ = 1 (W the cone edge's wrench, ``edge`` its
    force direction n + side μ t; ``load`` = dP/dξ there): scaled so the contact point's velocity u has the
    finger's normal speed u · n = direction · n, into ``out_twist``; the finger force, the multiplier of W
    along ``edge``, into ``force``. Returns (status, power dP/dξ · ξ): NO_APPROACH if u · n ≤ 0 (the value in
    place of the power), WRONG_SLIP if the finger's slip (direction − u) · t opposes its friction (the slip)."""
    wrench = np.array([edge[0], edge[1], -c[1] * edge[0] + c[0] * edge[1]])
    approach = (twist[0] - twist[2] * c[1]) * normal[0] + (twist[1] + twist[2] * c[0]) * normal[1]
    if approach <= 0.0:
        return NO_APPROACH, approach
    scale = (direction[0] * normal[0] + direction[1] * normal[1]) / approach
    for i in range(3):
        out_twist[i] = twist[i] * scale
    slip = ((direction[0] - out_twist[0] + out_twist[2] * c[1]) * left[0]
            + (direction[1] - out_twist[1] - out_twist[2] * c[0]) * left[1])
    if side * slip < -1e-8:
        return WRONG_SLIP, slip
    multiplier = (load[0] * wrench[0] + load[1] * wrench[1] + load[2] * wrench[2]) / (
        wrench[0] ** 2 + wrench[1] ** 2 + wrench[2] ** 2)
    force[0], force[1] = multiplier * edge[0], multiplier * edge[1]
    return OK, load[0] * out_twist[0] + load[1] * out_twist[1] + load[2] * out_twist[2]


class Model(NamedTuple):
    """A support as the kernels take it (local frame: lengths in footprint radii; weights sum to 1).

    ``kind`` POINTS: support points (x, y) with ``weights``; a point slower than ``rest`` (relative) × (|v| +
    |ω| ``reach``) counts as at rest. ``kind`` POLYGON: a uniform pressure over the polygon with vertices (ax,
    ay), unit edge directions (tx, ty), edge ``lengths`` and ``area``, whose quadrature rule (x, y, weights)
    serves where the center of rotation is farther than ``far`` from the ``centroid`` (cx, cy), its edges'
    closed form nearer (``tiny``: the |h| below which an edge's line passes through the center of rotation).
    The other kind's fields are empty arrays and zeros.
    """

    kind: int
    x: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    rest: float
    reach: float
    far: float
    ax: np.ndarray
    ay: np.ndarray
    tx: np.ndarray
    ty: np.ndarray
    lengths: np.ndarray
    area: float
    tiny: float
    cx: float
    cy: float


def points_model(x, y, weights, rest, reach) -> Model:
    """The model of weighted points: P's rest threshold is ``rest`` (relative) × (|v| + |ω| ``reach``)."""
    return Model(kind=POINTS, x=x, y=y, weights=weights, rest=float(rest), reach=float(reach), far=0.0, ax=_NONE,
                 ay=_NONE, tx=_NONE, ty=_NONE, lengths=_NONE, area=0.0, tiny=0.0, cx=0.0, cy=0.0)


def polygon_model(gauss_x, gauss_y, gauss_weights, far, ax, ay, tx, ty, lengths, area, tiny, centroid) -> Model:
    """The model of a uniform polygon: its quadrature rule where the center of rotation is farther than ``far``
    from the centroid, its edges' closed form nearer."""
    return Model(kind=POLYGON, x=gauss_x, y=gauss_y, weights=gauss_weights, rest=0.0, reach=0.0, far=float(far),
                 ax=ax, ay=ay, tx=tx, ty=ty, lengths=lengths, area=float(area), tiny=float(tiny),
                 cx=float(centroid[0]), cy=float(centroid[1]))


@njit
def dissipation(model, twist, hessian, gradient, matrix):
    """P(ξ) per unit μ N of the support ``model`` (a :class:`Model`), its gradient and Hessian."""
    if model.kind == POINTS:
        scale = abs(twist[0]) + abs(twist[1]) + abs(twist[2]) * model.reach
        return point_sums(model.x, model.y, model.weights, twist, hessian, model.rest * scale, gradient, matrix)
    omega = twist[2]
    if np.hypot(twist[0] - omega * model.cy, twist[1] + omega * model.cx) >= model.far * abs(omega):
        return point_sums(model.x, model.y, model.weights, twist, hessian, 0.0, gradient, matrix)
    return polygon_closed_form(model.ax, model.ay, model.tx, model.ty, model.lengths, model.area, model.tiny, twist,
                               hessian, gradient, matrix)


@njit
def _slope(model, base, line, omega, twist, gradient, matrix):
    """dP/dω and d²P/dω² along the twists ξ = base + ω line (the gradient at ξ into ``gradient``)."""
    for i in range(3):
        twist[i] = base[i] + omega * line[i]
    dissipation(model, twist, True, gradient, matrix)
    slope, curvature = 0.0, 0.0
    for i in range(3):
        slope += gradient[i] * line[i]
        for j in range(3):
            curvature += line[i] * matrix[i, j] * line[j]
    return slope, curvature


@njit
def sticking_rotation(model, base, line, start, tolerance, max_iterations, gradient):
    """The root ω of P's slope along ξ = base + ω line (non-decreasing: P is convex) from ``start``, by Newton's
    method safeguarded with bracketing (rtsafe): Newton converges in a handful of evaluations on the closed-form
    derivative, which scipy's bracketing root finders do not use (nor can they run inside a kernel); if the slope
    jumps over zero (a kink of P), the bracket closes on the jump. Returns (found, ω, slope at ω), dP/dξ at ω into
    ``gradient``; ω is the best point seen when the bracket closes."""
    twist, current, matrix = np.empty(3), np.empty(3), np.empty((3, 3))
    x = start
    value, derivative = _slope(model, base, line, x, twist, current, matrix)
    low, high = -np.inf, np.inf
    best_x, best_value = x, value
    gradient[:] = current
    previous_step = np.inf
    for _ in range(max_iterations):
        if abs(value) <= tolerance:
            gradient[:] = current
            return True, x, value
        if value < 0.0:
            low = x
        else:
            high = x
        bracketed = np.isfinite(low) and np.isfinite(high)
        if bracketed and high - low <= 1e-15 * max(1.0, abs(low), abs(high)):
            return True, best_x, best_value
        step = -value / derivative if derivative > 0.0 else np.inf
        candidate = x + step
        # Newton steps that do not halve the one before (zigzagging across a bend of the slope, where P's
        # curvature jumps as the center of rotation passes a row of support points) give way to bisection
        zigzag = bracketed and abs(step) > 0.5 * previous_step
        if not (low < candidate and candidate < high) or not np.isfinite(candidate) or zigzag:
            candidate = 0.5 * (low + high) if bracketed else x + np.sign(-value) * max(1.0, 2.0 * abs(x))
        previous_step = abs(candidate - x)
        x = candidate
        value, derivative = _slope(model, base, line, x, twist, current, matrix)
        if abs(value) < abs(best_value):
            best_x, best_value = x, value
            gradient[:] = current
    return False, x, value


@njit
def null_basis(wrench, basis):
    """An orthonormal basis (3, 2) of the plane orthogonal to ``wrench`` into ``basis`` (Duff et al. 2017,
    "Building an orthonormal basis, revisited")."""
    norm = math.sqrt(wrench[0] ** 2 + wrench[1] ** 2 + wrench[2] ** 2)
    x, y, z = wrench[0] / norm, wrench[1] / norm, wrench[2] / norm
    sign = math.copysign(1.0, z)
    a = -1.0 / (sign + z)
    b = x * y * a
    basis[0, 0], basis[0, 1] = 1.0 + sign * x * x * a, b
    basis[1, 0], basis[1, 1] = sign * b, sign + y * y * a
    basis[2, 0], basis[2, 1] = -sign * x, -y


@njit
def balanced(gradient, wrench, tolerance, rounding):
    """Whether some multiple of ``wrench`` balances dP/dξ (Newton's law, chart-free) to ``tolerance`` relative, or
    to ``rounding``: dP/dξ sums the support points' forces, of total magnitude 1 (μ N in the local frame), and
    when they nearly cancel (an object all but pivoting freely) a relative test is beyond rounding."""
    norm = math.sqrt(wrench[0] ** 2 + wrench[1] ** 2 + wrench[2] ** 2)
    along = (gradient[0] * wrench[0] + gradient[1] * wrench[1] + gradient[2] * wrench[2]) / norm
    unbalanced, size = 0.0, 0.0
    for i in range(3):
        unbalanced += (gradient[i] - along * wrench[i] / norm) ** 2
        size += gradient[i] ** 2
    return math.sqrt(unbalanced) <= tolerance * math.sqrt(size) + rounding


@njit
def newton_on_plane(model, wrench, start, max_iterations, tolerance, accept_tolerance, rounding, twist, gradient):
    """Damped Newton for min P on W · ξ = 1 (W = ``wrench``) from ``start``, in coordinates z of the plane
    (ξ = W/|W|² + B z, B its orthonormal basis): stop when the unbalanced part Bᵀ dP/dξ is below ``tolerance``
    relative (plus ``rounding``); Armijo backtracking while P can resolve the decrease, else the full step;
    give up after three short steps in a row (the iterates slide into a kink of P: a support point at rest).
    The twist and dP/dξ into ``twist``, ``gradient``; returns whether they balance to ``accept_tolerance``."""
    basis, H = np.empty((3, 2)), np.empty((3, 3))
    trial_gradient, trial_H = np.empty(3), np.empty((3, 3))
    null_basis(wrench, basis)
    squared = wrench[0] ** 2 + wrench[1] ** 2 + wrench[2] ** 2
    along = (wrench[0] * start[0] + wrench[1] * start[1] + wrench[2] * start[2])
    z, trial, step, reduced = np.zeros(2), np.empty(2), np.empty(2), np.empty(2)
    for k in range(2):
        for i in range(3):
            z[k] += basis[i, k] * (start[i] / along - wrench[i] / squared)
    _on_plane(wrench, squared, basis, z, twist)
    power = dissipation(model, twist, True, gradient, H)
    short_steps = 0
    for _ in range(max_iterations):
        for k in range(2):
            reduced[k] = basis[0, k] * gradient[0] + basis[1, k] * gradient[1] + basis[2, k] * gradient[2]
        size = math.sqrt(gradient[0] ** 2 + gradient[1] ** 2 + gradient[2] ** 2)
        if math.sqrt(reduced[0] ** 2 + reduced[1] ** 2) <= tolerance * size + rounding:
            _on_plane(wrench, squared, basis, z, twist)
            return True
        h11, h12, h22 = _reduced_hessian(H, basis)
        regular = 1e-14 * (h11 + h22)
        h11, h22 = h11 + regular, h22 + regular
        determinant = h11 * h22 - h12 * h12
        step[0] = (h12 * reduced[1] - h22 * reduced[0]) / determinant
        step[1] = (h12 * reduced[0] - h11 * reduced[1]) / determinant
        decrease = reduced[0] * step[0] + reduced[1] * step[1]
        # below rounding of P the Armijo test cannot tell; the gradient still can, so take the Newton step
        resolvable = -decrease > 1e-11 * power
        length = 1.0
        while True:
            trial[0], trial[1] = z[0] + length * step[0], z[1] + length * step[1]
            _on_plane(wrench, squared, basis, trial, twist)
            trial_power = dissipation(model, twist, True, trial_gradient, trial_H)
            if not resolvable or trial_power <= power + 1e-4 * length * decrease or length < 1e-12:
                break
            length *= 0.5
        # repeated short steps: the iterates are sliding into a kink of P (a support point at rest)
        short_steps = short_steps + 1 if length < 1e-3 else 0
        if length < 1e-12 or short_steps >= 3:
            break
        z[:] = trial
        power = trial_power
        gradient[:] = trial_gradient
        H[:] = trial_H
    _on_plane(wrench, squared, basis, z, twist)
    return balanced(gradient, wrench, accept_tolerance, rounding)


@njit
def _on_plane(wrench, squared, basis, z, twist):
    """ξ = W/|W|² + B z."""
    for i in range(3):
        twist[i] = wrench[i] / squared + basis[i, 0] * z[0] + basis[i, 1] * z[1]


@njit
def _reduced_hessian(H, basis):
    """(Bᵀ H B)_11, _12, _22."""
    h = np.zeros((2, 2))
    for a in range(2):
        for b in range(2):
            for i in range(3):
                for j in range(3):
                    h[a, b] += basis[i, a] * H[i, j] * basis[j, b]
    return h[0, 0], h[0, 1], h[1, 1]

