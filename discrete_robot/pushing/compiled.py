"""The support friction's inner loops and the whole push prediction around them, as numba kernels (the math is
in :mod:`.support`'s and :mod:`.prediction`'s docstrings). Imports nothing of :mod:`discrete_robot.pushing`: the
support classes build a :class:`Model` and hand it here.

A push prediction evaluates the dissipated power and its derivatives a few dozen times on a handful of edges or a
few hundred points; numpy's per-call overhead was most of that cost (as in :mod:`discrete_robot.jit`), and then
the Python between the solvers: :func:`predict` answers a contact query in one call.

- :func:`predict`: the contact mode, twist and finger force (sticking root, resting-point forces, cone test,
  sliding Newton) on a :class:`Model` and a :class:`Data` (results and workspace: the kernels allocate nothing),
  called from Python through a support's :class:`Predictor`;

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
import threading
from typing import NamedTuple

import numpy as np

from discrete_robot.geometry3d import copy_into, matrix_copy_into
from discrete_robot.jit import Binding, bind, njit

POINTS, POLYGON = 0, 1
_NONE = np.empty(0)

#: the solver's cone tolerance, relative to the friction bound μ f_n, and the rounding of f (relative to |f|)
CONE_TOLERANCE = 1e-9
FORCE_ROUNDING = 1e-13
#: balance tolerance of the solvers (relative to |f|)
NEWTON_TOLERANCE = 1e-12
#: a Newton solve that stalls at rounding level is accepted below this relative residual (the balance spec is 1e-6)
ACCEPT_TOLERANCE = 1e-10
#: absolute floor of those balance tests (local frame, unit μ N): ~50 units of rounding of a sum of unit forces
GRADIENT_ROUNDING = 1e-14
MAX_ITERATIONS = 50


@njit(allocates=False)
def point_sums(x, y, weights, twist, hessian, rest, gradient, matrix, skip=-1):
    """Σ_i w_i |v_i| with v_i = v + ω perp(r_i), point ``skip`` left out (−1: none); a point slower than ``rest``
    (> 0) contributes v_i / rest to the unit velocity, an element of the subdifferential."""
    power = 0.0
    gradient[:] = 0.0
    if hessian:
        matrix[:] = 0.0
    for i in range(x.shape[0]):
        if i == skip:
            continue
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


@njit(allocates=False)
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
        for i in range(3):
            li0, li1 = _lever(i, px, py)
            for j in range(3):
                lj0, lj1 = _lever(j, px, py)
                matrix[i, j] = scale * (li0 * (m00 * lj0 + m01 * lj1) + li1 * (m01 * lj0 + m11 * lj1))
    return abs(omega) * distance_integral / area


@njit(allocates=False)
def _lever(i, px, py):
    """Row i of the lever [[1, 0], [0, 1], [−p_y, p_x]] that maps a force at p to its wrench about the origin."""
    if i == 0:
        return 1.0, 0.0
    if i == 1:
        return 0.0, 1.0
    return -py, px


@njit(allocates=False)
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


#: :func:`predict`'s and :func:`sliding_motion`'s outcomes: OK; the sliding twist does not approach the contact
#: (NO_APPROACH) or slips against its friction (WRONG_SLIP); no root of the sticking slope (NO_ROOT); a sticking
#: minimum off the slope's root on a polygon (NO_STICKING_MINIMUM); a pivot about a support point at the contact
#: (PIVOT_AT_CONTACT) or one its static friction cannot hold (PIVOT_UNBALANCED); the sliding Newton solve stalled
#: (STALLED: on support points, :mod:`.prediction` finishes it)
OK, NO_APPROACH, WRONG_SLIP, NO_ROOT, NO_STICKING_MINIMUM, PIVOT_AT_CONTACT, PIVOT_UNBALANCED, STALLED = range(8)


@njit(allocates=False)
def sliding_motion(twist, load, c, normal, left, direction, side, edge, out_twist, force):
    """The sliding motion from the least-power twist ``twist`` on W · ξ = 1 (W the cone edge's wrench, ``edge`` its
    force direction n + side μ t; ``load`` = dP/dξ there): scaled so the contact point's velocity u has the
    finger's normal speed u · n = direction · n, into ``out_twist``; the finger force, the multiplier of W
    along ``edge``, into ``force``. Returns (status, power dP/dξ · ξ): NO_APPROACH if u · n ≤ 0 (the value in
    place of the power), WRONG_SLIP if the finger's slip (direction − u) · t opposes its friction (the slip)."""
    moment = -c[1] * edge[0] + c[0] * edge[1]
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
    multiplier = (load[0] * edge[0] + load[1] * edge[1] + load[2] * moment) / (
        edge[0] ** 2 + edge[1] ** 2 + moment ** 2)
    force[0], force[1] = multiplier * edge[0], multiplier * edge[1]
    return OK, load[0] * out_twist[0] + load[1] * out_twist[1] + load[2] * out_twist[2]


class Model(NamedTuple):
    """A support as the kernels take it (local frame: lengths in footprint radii; weights sum to 1).

    ``kind`` POINTS: support points (x, y) with ``weights``; a point slower than ``rest`` (relative) × (|v| +
    |ω| ``reach``) counts as at rest. ``kind`` POLYGON: a uniform pressure over the polygon with vertices (ax,
    ay), unit edge directions (tx, ty), edge ``lengths`` and ``area``, whose quadrature rule (x, y, weights)
    serves where the center of rotation is farther than ``far`` from the ``centroid`` (cx, cy), its edges'
    closed form nearer (``tiny``: the |h| below which an edge's line passes through the center of rotation).
    The other kind's fields are empty arrays and zeros. ``pivot_torque``: P of a unit rotation about the centroid,
    m_max (set by the support once the model can evaluate it).
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
    pivot_torque: float = 0.0


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


@njit(allocates=False)
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


class Data(NamedTuple):
    """:func:`predict`'s results and workspace (local frame: lengths in footprint radii, forces in μ N, twists per
    unit finger speed). Results: ``twist`` and ``force`` (the finger's); when sliding, ``wrench`` W of the cone
    edge ``edge`` and the least-power twist ``least`` on W · ξ = 1 with dP/dξ there, ``load`` (when Newton stalled:
    its last iterate), or ``pivot_twist`` and ``pivot_load`` when that minimum rests on a support point. The rest is
    workspace."""

    twist: np.ndarray
    force: np.ndarray
    wrench: np.ndarray
    edge: np.ndarray
    least: np.ndarray
    load: np.ndarray
    pivot_twist: np.ndarray
    pivot_load: np.ndarray
    left: np.ndarray
    base: np.ndarray
    line: np.ndarray
    guess: np.ndarray
    gradient: np.ndarray
    low: np.ndarray
    high: np.ndarray
    trial_twist: np.ndarray
    trial_gradient: np.ndarray
    hessian: np.ndarray
    trial_hessian: np.ndarray
    basis: np.ndarray
    z: np.ndarray
    trial: np.ndarray
    step: np.ndarray
    reduced: np.ndarray


def create_data() -> Data:
    """A :class:`Data` for :func:`predict` (one per thread: the kernels release the GIL)."""
    shapes = {"edge": 2, "force": 2, "left": 2, "low": 2, "high": 2, "z": 2, "trial": 2, "step": 2, "reduced": 2,
              "hessian": (3, 3), "trial_hessian": (3, 3), "basis": (3, 2)}
    return Data(**{name: np.zeros(shapes.get(name, 3)) for name in Data._fields})


class Outcome(NamedTuple):
    """:func:`predict`'s answer from Python: ``status``, ``side`` and ``value`` as it returns them, and the
    :class:`Data` holding the twist and force."""

    status: int
    side: float
    value: float
    data: Data


class Predictor:
    """:func:`predict` on one support's Model from Python, ``predictor(c, normal, direction, mu) -> Outcome``: a
    Data and its Binding per thread (the kernels release the GIL, so two threads predicting pushes of one object
    must not share a workspace; a Binding is typed once, where a Model and a Data passed apart would be typed
    array by array at every call)."""

    def __init__(self, model: Model):
        self.model = model
        self._local = threading.local()

    def workspace(self) -> tuple[Data, Binding]:
        """This thread's Data and its Binding with the model."""
        entry = getattr(self._local, "entry", None)
        if entry is None:
            data = create_data()
            entry = self._local.entry = (data, bind(self.model, data))
        return entry

    def __call__(self, c, normal, direction, mu) -> Outcome:
        data, binding = self.workspace()
        status, side, value = predict(binding, c, normal, direction, mu)
        return Outcome(status, side, value, data)

    def __getstate__(self):
        return {"model": self.model}        # the threads' workspaces are not sent

    def __setstate__(self, state):
        self.__init__(state["model"])


@njit
def predict(binding, c, normal, direction, mu):
    """The contact mode and motion of a pushed support (:mod:`.prediction`'s docstring has the mechanics): the finger
    touches at ``c`` with inward unit ``normal``, moves along the unit ``direction`` (approaching: direction · n >
    0), contact friction ``mu``; ``binding`` holds the support's :class:`Model` and a :class:`Data`.

    Sticking: ω of the least power on the line ξ = (direction, 0) + ω (c_y, −c_x, 1) (:func:`sticking_rotation`
    from the ellipsoidal limit surface's ω = l · direction / (m_max² + |l|²), l = perp(c)), whose force dP/dξ
    (or, pivoting about a support point at rest, the segment of forces its static friction allows:
    :func:`_resting_point_forces`) is tested against the cone (:func:`force_in_cone`). Else sliding on the cone's
    edge n + s μ t, s = sign(f · t): the least power on W · ξ = 1 (:func:`newton_on_plane` from the ellipsoidal
    guess (W_f, W_m / m_max²); where it stalls on weighted points, a rest on the slowest support point,
    :func:`resting_point_twist`) scaled to the finger's normal speed (:func:`sliding_motion`).

    Results in the Data's ``twist`` and ``force``; returns (status, side, value): the outcome (OK or an error code
    above), s (0 sticking, +1 sliding left, −1 right) and the support power dP/dξ · ξ when OK, else the failing
    quantity (the slope, the support point's index, u · n, the slip)."""
    model, data = binding.model, binding.data
    left, base, line, twist, force = data.left, data.base, data.line, data.twist, data.force
    left[0], left[1] = -normal[1], normal[0]
    base[0], base[1], base[2] = direction[0], direction[1], 0.0
    line[0], line[1], line[2] = c[1], -c[0], 1.0
    length = math.sqrt(line[0] * line[0] + line[1] * line[1] + line[2] * line[2])
    lever_x, lever_y = -c[1], c[0]
    start = (lever_x * direction[0] + lever_y * direction[1]) / (
        model.pivot_torque ** 2 + lever_x * lever_x + lever_y * lever_y)
    found, omega, value = sticking_rotation(model, data, base, line, start, NEWTON_TOLERANCE * length,
                                            2 * MAX_ITERATIONS, data.gradient)
    if not found:
        return NO_ROOT, 0.0, value
    for i in range(3):
        twist[i] = base[i] + omega * line[i]
    low, high = data.low, data.high
    if abs(value) <= 1e-9 * length:
        low[0], low[1] = data.gradient[0], data.gradient[1]
        high[0], high[1] = data.gradient[0], data.gradient[1]
    elif model.kind != POINTS:
        return NO_STICKING_MINIMUM, 0.0, value
    else:
        status, point = _resting_point_forces(model, data, twist, c, low, high)
        if status != OK:
            return status, 0.0, float(point)
    if force_in_cone(low, high, normal, left, mu, CONE_TOLERANCE, FORCE_ROUNDING, force):
        # Euler: P(ξ) = g · ξ for every subgradient g = [f; perp(c) · f], and u(ξ) = direction
        return OK, 0.0, force[0] * direction[0] + force[1] * direction[1]
    side = 1.0 if low[0] * left[0] + low[1] * left[1] > 0.0 else -1.0
    edge, wrench, guess = data.edge, data.wrench, data.guess
    for i in range(2):
        edge[i] = normal[i] + side * mu * left[i]
    wrench[0], wrench[1], wrench[2] = edge[0], edge[1], lever_x * edge[0] + lever_y * edge[1]
    guess[0], guess[1], guess[2] = wrench[0], wrench[1], wrench[2] / model.pivot_torque ** 2
    least, load = data.least, data.load
    if not newton_on_plane(model, data, wrench, guess, MAX_ITERATIONS, NEWTON_TOLERANCE, ACCEPT_TOLERANCE,
                           GRADIENT_ROUNDING, least, load):
        # most stalls of weighted points end on the kink itself, a support point at rest: cheap to check here
        if model.kind != POINTS or not resting_point_twist(model, data, wrench, slowest_point(model, least),
                                                           data.pivot_twist, data.pivot_load):
            return STALLED, side, 0.0
        least, load = data.pivot_twist, data.pivot_load
    status, value = sliding_motion(least, load, c, normal, left, direction, side, edge, twist, force)
    return status, side, value


@njit(allocates=False)
def slowest_point(model, twist):
    """The support point slowest under ``twist`` (the first of equals), |v + ω perp(r_i)|."""
    k, slowest = 0, np.inf
    for i in range(model.x.shape[0]):
        vx = twist[0] - twist[2] * model.y[i]
        vy = twist[1] + twist[2] * model.x[i]
        speed = math.sqrt(vx * vx + vy * vy)
        if speed < slowest:
            k, slowest = i, speed
    return k


@njit(allocates=False)
def resting_point_twist(model, data, wrench, k, twist, load):
    """Rotation about support point k at rest, whose static friction g (|g| ≤ :func:`static_capacity`) completes
    the balance G_without_k + [g; perp(r_k) · g] = λ W with λ > 0: the twist into ``twist``, λ W into ``load``;
    returns whether it balances.

    In closed form: g acts at r_k, so moments about r_k give λ m_k = (moment of G about r_k), m_k the wrench's
    moment about r_k (λ is then G · ξ, the power, by Euler's identity), and g = λ f_W − G_f. When the wrench's
    line passes within ~1e-9 of r_k, m_k → 0 and λ, g blow up: that rejects the pivot, which no solve of the
    3×3 system (singular with m_k) would do reliably. Workspace: ``data``'s trial fields."""
    rx, ry = model.x[k], model.y[k]
    moment = wrench[0] * ry + wrench[1] * -rx + wrench[2]       # W · (r_y, −r_x, 1)
    if moment == 0.0:
        return False
    twist[0], twist[1], twist[2] = ry / moment, -rx / moment, 1.0 / moment
    gradient = data.trial_gradient
    point_sums(model.x, model.y, model.weights, twist, False, 0.0, gradient, data.trial_hessian, k)
    multiplier = (gradient[0] * ry + gradient[1] * -rx + gradient[2]) / moment
    static_x, static_y = multiplier * wrench[0] - gradient[0], multiplier * wrench[1] - gradient[1]
    if not (multiplier > 0.0 and math.hypot(static_x, static_y) <= static_capacity(model, k)):
        return False
    for i in range(3):
        load[i] = multiplier * wrench[i]
    return True


@njit(allocates=False)
def _resting_point_forces(model, data, twist, c, low, high):
    """Sticking about the support point k at rest (the slowest under ``twist``): its static friction g (|g| ≤
    :func:`static_capacity`) and the finger force f = G + g must balance moments about c, so the finger forces
    form a segment, its ends into ``low``, ``high``. Moments about the origin: perp(c) · (G + g) = M + perp(r_k) · g,
    i.e. perp(c − r_k) · g = M − perp(c) · G. Returns (status, k)."""
    k = slowest_point(model, twist)
    gradient = data.trial_gradient
    point_sums(model.x, model.y, model.weights, twist, False, 0.0, gradient, data.trial_hessian, k)
    capacity = static_capacity(model, k)
    lever_x, lever_y = c[0] - model.x[k], c[1] - model.y[k]
    distance = math.sqrt(lever_x * lever_x + lever_y * lever_y)
    if distance <= 1e-12:
        return PIVOT_AT_CONTACT, k
    normal_part = (gradient[2] - (-c[1] * gradient[0] + c[0] * gradient[1])) / distance
    if abs(normal_part) > capacity:
        return PIVOT_UNBALANCED, k
    half_chord = np.sqrt(capacity ** 2 - normal_part ** 2)
    along_x, along_y = lever_x / distance, lever_y / distance
    middle_x, middle_y = gradient[0] - normal_part * along_y, gradient[1] + normal_part * along_x
    low[0], low[1] = middle_x - half_chord * along_x, middle_y - half_chord * along_y
    high[0], high[1] = middle_x + half_chord * along_x, middle_y + half_chord * along_y
    return OK, k


@njit(allocates=False)
def static_capacity(model, k):
    """The static friction support point k at rest can be credited with (unit μ N): its share w_k (to 1e-9) and
    what the others' Coulomb forces gain when the center of rotation moves off r_k by the rest resolution
    (``model.rest``) to which :func:`dissipation` resolves it (point j's force turns by rest / |r_j − r_k|). A pivot
    that needs a little more than w_k rotates about a point that close to r_k, k's friction kinetic and the
    others' turned."""
    gained = 0.0
    for j in range(model.x.shape[0]):
        dx, dy = model.x[j] - model.x[k], model.y[j] - model.y[k]
        distance = math.sqrt(dx * dx + dy * dy)
        if distance > 0.0:
            gained += model.weights[j] * (model.rest / distance)
    return model.weights[k] * (1.0 + 1e-9) + gained


@njit(allocates=False)
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


@njit(allocates=False)
def sticking_rotation(model, data, base, line, start, tolerance, max_iterations, gradient):
    """The root ω of P's slope along ξ = base + ω line (non-decreasing: P is convex) from ``start``, by Newton's
    method safeguarded with bracketing (rtsafe): Newton converges in a handful of evaluations on the closed-form
    derivative, which scipy's bracketing root finders do not use (nor can they run inside a kernel); if the slope
    jumps over zero (a kink of P), the bracket closes on the jump. Returns (found, ω, slope at ω), dP/dξ at ω into
    ``gradient``; ω is the best point seen when the bracket closes. Workspace: ``data``'s trial fields."""
    twist, current, matrix = data.trial_twist, data.trial_gradient, data.trial_hessian
    x = start
    value, derivative = _slope(model, base, line, x, twist, current, matrix)
    low, high = -np.inf, np.inf
    best_x, best_value = x, value
    copy_into(current, gradient)
    previous_step = np.inf
    for _ in range(max_iterations):
        if abs(value) <= tolerance:
            copy_into(current, gradient)
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
            copy_into(current, gradient)
    return False, x, value


@njit(allocates=False)
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


@njit(allocates=False)
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


@njit(allocates=False)
def newton_on_plane(model, data, wrench, start, max_iterations, tolerance, accept_tolerance, rounding, twist,
                    gradient):
    """Damped Newton for min P on W · ξ = 1 (W = ``wrench``) from ``start``, in coordinates z of the plane
    (ξ = W/|W|² + B z, B its orthonormal basis): stop when the unbalanced part Bᵀ dP/dξ is below ``tolerance``
    relative (plus ``rounding``); Armijo backtracking while P can resolve the decrease, else the full step;
    give up after three short steps in a row (the iterates slide into a kink of P: a support point at rest).
    The twist and dP/dξ into ``twist``, ``gradient``; returns whether they balance to ``accept_tolerance``.
    Workspace: ``data``'s plane and trial fields."""
    basis, H = data.basis, data.hessian
    trial_gradient, trial_H = data.trial_gradient, data.trial_hessian
    null_basis(wrench, basis)
    squared = wrench[0] ** 2 + wrench[1] ** 2 + wrench[2] ** 2
    along = (wrench[0] * start[0] + wrench[1] * start[1] + wrench[2] * start[2])
    z, trial, step, reduced = data.z, data.trial, data.step, data.reduced
    z[0] = z[1] = 0.0
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
        copy_into(trial, z)
        power = trial_power
        copy_into(trial_gradient, gradient)
        matrix_copy_into(trial_H, H)
    _on_plane(wrench, squared, basis, z, twist)
    return balanced(gradient, wrench, accept_tolerance, rounding)


@njit(allocates=False)
def _on_plane(wrench, squared, basis, z, twist):
    """ξ = W/|W|² + B z."""
    for i in range(3):
        twist[i] = wrench[i] / squared + basis[i, 0] * z[0] + basis[i, 1] * z[1]


@njit(allocates=False)
def _reduced_hessian(H, basis):
    """(Bᵀ H B)_11, _12, _22."""
    h11, h12, h22 = 0.0, 0.0, 0.0
    for i in range(3):
        for j in range(3):
            h11 += basis[i, 0] * H[i, j] * basis[j, 0]
    for i in range(3):
        for j in range(3):
            h12 += basis[i, 0] * H[i, j] * basis[j, 1]
    for i in range(3):
        for j in range(3):
            h22 += basis[i, 1] * H[i, j] * basis[j, 1]
    return h11, h12, h22

