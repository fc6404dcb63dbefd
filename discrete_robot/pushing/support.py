"""Coulomb support friction of a planar object sliding on a table: dissipated power and its derivatives.

A twist xi = (v_x, v_y, omega) (velocity of the frame origin, rad/s) moves the
support point r with v(r) = v + omega perp(r). With pressure p(r) (total 1),
the frictional power is

    P(xi) = integral p(r) |v(r)| dA            (times mu_s N, applied by the caller)

P is convex and positively homogeneous of degree 1 in xi. Its gradient

    dP/dxi = integral p(r) [v_hat(r); perp(r) . v_hat(r)] dA

is the wrench (f_x, f_y, m about the origin) an agent must apply to keep the
object moving with xi: the table's friction load is its negative. Euler's
identity xi . dP/dxi = P holds. The Hessian

    d2P/dxi2 = integral p(r) b b^T / |v(r)| dA,   b = [w_hat; perp(r) . w_hat],  w_hat = perp(v_hat)

is positive semi-definite with xi in its null space.

Two pressure models share this interface (:meth:`dissipation`):

- :class:`UniformPolygonSupport`: uniform pressure over a polygon, integrated
  exactly (no quadrature error): with the center of rotation p, |v(r)| =
  |omega| |r - p| and the divergence theorem turns every area integral into
  edge integrals of sqrt(h^2 + t^2) that have closed forms. Far from the
  footprint (near-translation) the closed forms lose digits to cancellation,
  while the integrand is analytic over the footprint, so a fixed quadrature
  is exact to rounding there: a Gauss rule on a fan triangulation, or for
  many-sided footprints a Chebyshev grid on the bounding box weighted by the
  polygon's moments (100 points whatever the number of vertices).
- :class:`PointSupport`: weighted support points (given by the user, or a
  grid discretisation of a uniform pressure). Exact Coulomb friction is not
  differentiable when the center of rotation sits on a support point; the
  gradient then takes that point's friction as zero (one subgradient) and
  :mod:`discrete_robot.pushing.prediction` completes it with the point's
  static friction.

Coordinates are whatever the caller uses; the prediction works in a frame at
the support centroid scaled by the footprint radius so that every quantity is
O(1).
"""

from typing import Protocol

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components
from scipy.spatial import KDTree

from discrete_robot.errors import InputError
from discrete_robot.pushing import compiled
from discrete_robot.pushing.polygon import centroid, contains, signed_area

#: beyond this many footprint radii from the centroid the center of rotation counts as far (quadrature branch):
#: there the closed forms lose ~eps FAR^2 to cancellation while the fixed rules err by ~FAR^(-2 order); the
#: branches agree to ~1e-11 at the switch (measured on random directions for a triangle, a non-convex pentagon,
#: a 20-point star and a 360-gon).
FAR_FACTOR = 10.0
#: Gauss-Legendre points per direction on each fan triangle
GAUSS_ORDER = 6
#: polynomial degree of the bounding-box Chebyshev rule (used when it has fewer points than the fan rule)
FAR_DEGREE = 9
#: support points closer than this are merged (prediction's local frame: lengths in footprint radii). Their
#: weighted mean moves each one's force by at most this, changing moments by less than the solver's balance
#: tolerance; kept apart, a pivot on them would get the static friction of one only, and their few-1e-10 structure
#: (an object all but pivoting freely on them) is below what a floating-point twist resolves.
MERGE_DISTANCE = 1e-10
#: PointSupport.dissipation treats a point slower than this fraction of the twist's scale (|v| + |omega| reach) as
#: at rest: a center of rotation is resolved to about this many reaches from a support point
REST_RESOLUTION = 1e-13


class SupportFriction(Protocol):
    """Pressure model of the support: dissipated power per unit mu_s N and its derivatives."""

    centroid: np.ndarray
    radius: float
    #: P of a unit rotation about the centroid: the largest friction torque (unit mu N), m_max
    pivot_torque: float
    #: the support as the compiled kernels take it
    model: compiled.Model

    def dissipation(self, twist: np.ndarray, hessian: bool = False) -> tuple[float, np.ndarray, np.ndarray | None]:
        """(P, dP/dxi, d2P/dxi2 or None) at ``twist`` (not zero)."""

    #: :func:`.compiled.predict` on ``model``
    predictor: compiled.Predictor


class _CompiledSupport:
    """What both supports share: the compiled :class:`.compiled.Model`, completed with its pivot torque, its
    dissipation and its :class:`.compiled.Predictor`."""

    def _compile(self, model: compiled.Model):
        self.model = model
        self.pivot_torque = self.dissipation(np.array([self.centroid[1], -self.centroid[0], 1.0]))[0]
        self.model = model._replace(pivot_torque=self.pivot_torque)
        self.predictor = compiled.Predictor(self.model)

    def dissipation(self, twist, hessian=False):
        """(P, dP/dξ, d²P/dξ² or None) at ``twist`` (not zero), by :func:`.compiled.dissipation`."""
        gradient, matrix = np.empty(3), np.empty((3, 3))
        power = compiled.dissipation(self.model, np.asarray(twist, dtype=float), hessian, gradient, matrix)
        return power, gradient, matrix if hessian else None


def merged_points(points: np.ndarray, weights: np.ndarray, merge_distance: float) -> tuple[np.ndarray, np.ndarray]:
    """The points of positive weight, those closer than ``merge_distance`` (chains of them included) replaced by
    one at their weighted mean with their summed weight; weights normalised to sum 1."""
    points = np.asarray(points, dtype=float)
    weights = np.asarray(weights, dtype=float)
    keep = weights > 0.0
    points, weights = points[keep], weights[keep]
    pairs = KDTree(points).query_pairs(merge_distance, output_type="ndarray")
    adjacency = coo_array((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(points),) * 2)
    _, labels = connected_components(adjacency, directed=False)
    merged_weights = np.bincount(labels, weights=weights)
    merged = np.column_stack([np.bincount(labels, weights=weights * points[:, axis]) / merged_weights
                              for axis in (0, 1)])
    return merged, merged_weights / merged_weights.sum()


class PointSupport(_CompiledSupport):
    """Weighted support points (Coulomb friction concentrated at each point).

    ``points`` (k, 2), ``weights`` (k,) >= 0 with a positive sum; weights are
    normalised to sum 1. Points closer than ``merge_distance`` (chains of them
    included) are one point at their weighted mean carrying their summed weight
    (see :data:`MERGE_DISTANCE`).
    """

    def __init__(self, points: np.ndarray, weights: np.ndarray, merge_distance: float = MERGE_DISTANCE):
        self.points, self.weights = merged_points(points, weights, merge_distance)
        self._x = np.ascontiguousarray(self.points[:, 0])
        self._y = np.ascontiguousarray(self.points[:, 1])
        self.centroid = self.weights @ self.points
        self.radius = float(np.max(np.linalg.norm(self.points - self.centroid, axis=1)))
        reach = self.radius + float(np.linalg.norm(self.centroid))
        # a point slower than REST_RESOLUTION × (|v| + |ω| reach) counts as at rest (compiled.point_sums)
        self._compile(compiled.points_model(self._x, self._y, self.weights, REST_RESOLUTION, reach))

    def shifted(self, origin: np.ndarray) -> "PointSupport":
        """The same support in a frame at ``origin`` (twists there are the velocity of ``origin`` and omega)."""
        return PointSupport(self.points - origin, self.weights, merge_distance=0.0)


def fan_gauss_rule(vertices: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Points and signed weights integrating smooth functions over a simple polygon.

    Signed fan triangles (v0, v_i, v_i+1) add up to the polygon for any simple
    polygon (convex or not); each gets the collapsed-square (Duffy) product of
    ``order``-point Gauss-Legendre rules, exact for polynomials of degree
    2 order - 2. Weights sum to the polygon area.
    """
    nodes, gauss_weights = np.polynomial.legendre.leggauss(order)
    s = 0.5 * (nodes + 1.0)
    ws = 0.5 * gauss_weights
    u, t = np.meshgrid(s, s, indexing="ij")
    wu, wt = np.meshgrid(ws, ws, indexing="ij")
    # (u, t) in the unit square -> barycentric (1 - u, u (1 - t), u t) of a triangle; Jacobian 2 * area * u
    bary = np.stack([1.0 - u, u * (1.0 - t), u * t], axis=-1).reshape(-1, 3)
    unit_weight = (wu * wt * u).ravel() * 2.0
    origin = vertices[0]
    first = vertices[1:-1]
    second = vertices[2:]
    areas = 0.5 * ((first[:, 0] - origin[0]) * (second[:, 1] - origin[1])
                   - (first[:, 1] - origin[1]) * (second[:, 0] - origin[0]))
    corners = np.stack([np.broadcast_to(origin, first.shape), first, second], axis=1)
    points = np.einsum("qk,tkd->tqd", bary, corners).reshape(-1, 2)
    weights = (areas[:, None] * unit_weight[None, :]).ravel()
    return points, weights


def _chebyshev_lagrange(nodes: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Values (len(t), len(nodes)) of the Lagrange polynomials on Chebyshev nodes of the first kind
    (barycentric formula with the nodes' closed-form weights)."""
    n = len(nodes)
    barycentric = (-1.0) ** np.arange(n) * np.sin((2 * np.arange(n) + 1) * np.pi / (2 * n))
    difference = t[:, None] - nodes[None, :]
    exact = difference == 0.0
    difference[exact] = 1.0
    terms = barycentric / difference
    values = terms / terms.sum(axis=1, keepdims=True)
    hits = exact.any(axis=1)
    values[hits] = exact[hits].astype(float)
    return values


def far_field_rule(vertices: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """A quadrature rule over the polygon for functions analytic on its bounding box, with (degree + 1)^2 points
    whatever the number of vertices: the tensor Chebyshev grid on the bounding box, each point weighted by the
    polygon integral of its Lagrange polynomial (interpolate, then integrate the interpolant exactly; the
    integrals come once from the fan rule, exact for these polynomials)."""
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    centre, half = 0.5 * (low + high), 0.5 * (high - low)
    count = degree + 1
    nodes = np.cos((2 * np.arange(count) + 1) * np.pi / (2 * count))
    fine_points, fine_weights = fan_gauss_rule(vertices, degree + 2)
    local = (fine_points - centre) / half
    along_x = _chebyshev_lagrange(nodes, local[:, 0])
    along_y = _chebyshev_lagrange(nodes, local[:, 1])
    weights = np.einsum("g,gi,gj->ij", fine_weights, along_x, along_y).ravel()
    grid_x, grid_y = np.meshgrid(centre[0] + half[0] * nodes, centre[1] + half[1] * nodes, indexing="ij")
    return np.column_stack([grid_x.ravel(), grid_y.ravel()]), weights


class UniformPolygonSupport(_CompiledSupport):
    """Uniform pressure over a simple counter-clockwise polygon, integrated exactly.

    Rotation about p (omega != 0), d = r - p, with h the signed distance from p
    to an edge's line (outward normal n_e) and t the coordinate along the edge:

        int |d| dA     = (1/3) sum_e h_e int_e |d| ds                  (div(d |d|) = 3 |d|)
        int d_hat dA   = sum_e n_e int_e |d| ds                         (grad |d| = d_hat)
        int 1/|d| dA   = sum_e h_e int_e ds/|d|                         (div d_hat = 1/|d|)
        int (I - d_hat d_hat^T)/|d| dA = sum_e (int_e d_hat ds) n_e^T   (grad d_hat)

    with v_hat = sign(omega) perp(d_hat) and perp(r) . v_hat = sign(omega) r . d_hat.
    """

    def __init__(self, vertices: np.ndarray):
        self.vertices = np.asarray(vertices, dtype=float)
        self.area = signed_area(self.vertices)
        self.centroid = centroid(self.vertices)
        self.radius = float(np.max(np.linalg.norm(self.vertices - self.centroid, axis=1)))
        edge = np.roll(self.vertices, -1, axis=0) - self.vertices
        lengths = np.linalg.norm(edge, axis=1)
        points, weights = min((fan_gauss_rule(self.vertices, GAUSS_ORDER), far_field_rule(self.vertices, FAR_DEGREE)),
                              key=lambda rule: len(rule[1]))
        # the quadrature rule where the center of rotation is farther than FAR_FACTOR radii, the edge integrals
        # nearer; below 1e-150 radii an edge's line passes through the center of rotation: h asinh(t/|h|) -> 0
        self._compile(compiled.polygon_model(
            np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1]), weights / self.area,
            FAR_FACTOR * self.radius, self.vertices[:, 0].copy(), self.vertices[:, 1].copy(), edge[:, 0] / lengths,
            edge[:, 1] / lengths, lengths, self.area, 1e-150 * self.radius, self.centroid))


#: the support distributions an object can stand on (:func:`pressure_points`)
PRESSURES = ("uniform", "rim", "three_point")
#: a drawn stool is refused unless every leg carries at least this share of the weight: a centre of mass on an
#: edge of the legs' triangle is about to tip, and a leg with nothing on it is no leg
MIN_LEG_SHARE = 0.05
#: legs drawn per attempt at a stool (rejection sampling) before giving up on the footprint
LEG_DRAWS = 1000


def rim_support(footprint: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """An object standing on its rim: ``count`` support points at the midpoints of equal arcs of the outline of
    ``footprint`` (counter-clockwise (k, 2), m), equal weights: a uniform pressure per unit length of the outline
    by the midpoint rule (the weight over the outline's centroid, which for a centrally symmetric footprint is the
    area centroid)."""
    closed = np.vstack([footprint, footprint[:1]])
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))])
    s = (np.arange(count) + 0.5) * arc[-1] / count
    return np.column_stack([np.interp(s, arc, closed[:, 0]), np.interp(s, arc, closed[:, 1])]), np.ones(count)


def leg_shares(legs: np.ndarray, point: np.ndarray) -> np.ndarray:
    """The shares of a weight at ``point`` that three legs (3, 2) carry: the barycentric coordinates of ``point``
    in their triangle, the only normal forces w with sum w = 1 and sum w r = point (forces and both moments
    balance); NaN for collinear legs."""
    matrix = np.vstack([legs.T, np.ones(3)])
    if abs(np.linalg.det(matrix)) <= 1e-12 * np.max(np.ptp(legs, axis=0)) ** 2:
        return np.full(3, np.nan)
    return np.linalg.solve(matrix, np.append(point, 1.0))


def three_point_support(footprint: np.ndarray, rng: np.random.Generator,
                        min_share: float = MIN_LEG_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """An object on three legs at random: legs drawn uniformly over the footprint (rejection from its bounding
    box) until their triangle holds the area centroid (the centre of mass of a uniform object) with every leg
    carrying at least ``min_share`` of the weight; the weights are those shares (:func:`leg_shares`).
    InputError when no such stool turns up in LEG_DRAWS attempts (a footprint too thin for it)."""
    mass_centre = centroid(footprint)
    low, high = footprint.min(axis=0), footprint.max(axis=0)
    for _ in range(LEG_DRAWS):
        legs = []
        while len(legs) < 3:
            point = low + (high - low) * rng.random(2)
            if contains(footprint, point[None])[0]:
                legs.append(point)
        legs = np.array(legs)
        shares = leg_shares(legs, mass_centre)
        if np.all(shares >= min_share):
            return legs, shares
    raise InputError(f"no three legs with every share >= {min_share:g} of the weight in {LEG_DRAWS} draws "
                     "over this footprint")


def pressure_points(footprint: np.ndarray, pressure: str, rng: np.random.Generator,
                    rim_points: int = 32) -> tuple[np.ndarray, np.ndarray] | None:
    """Support points and weights of ``pressure`` (one of PRESSURES) under ``footprint``, or None for the uniform
    pressure (integrated exactly by :class:`UniformPolygonSupport`); ``rng`` draws three legs."""
    if pressure == "rim":
        return rim_support(footprint, rim_points)
    if pressure == "three_point":
        return three_point_support(footprint, rng)
    return None
