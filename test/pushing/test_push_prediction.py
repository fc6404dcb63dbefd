"""Planar push prediction against independent physics.

- Newton's quasistatic balance: the finger wrench plus the table's friction load
  is zero, with the friction load computed here independently of the solver:
  an iterated integral over the footprint (exact line integrals along vertical
  chords, adaptive Gauss-Kronrod across them), not the solver's closed forms.
- The friction-cone conditions and kinematics of each contact mode.
- Energy: the finger's power = support dissipation + contact sliding dissipation.
- Symmetry (centre pushes translate) and Mason's voting rule for the sense of rotation.
"""

import logging

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from scipy.integrate import quad_vec
from scipy.spatial import ConvexHull

from discrete_robot.errors import InputError
from discrete_robot.pushing.object_model import PressureModel, make_pushed_object
from discrete_robot.pushing.polygon import contains
from discrete_robot.pushing.prediction import ContactMode, predict_push

PROPERTY = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def moment(r, f):
    return r[0] * f[1] - r[1] * f[0]


def shoelace(vertices):
    x, y = vertices[:, 0], vertices[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    cross = x * yn - xn * y
    area = 0.5 * cross.sum()
    return area, np.array([((x + xn) * cross).sum(), ((y + yn) * cross).sum()]) / (6.0 * area)


def chords(vertices, x):
    """The intervals [low, high] of the vertical line at x inside the polygon (even-odd)."""
    a, b = vertices, np.roll(vertices, -1, axis=0)
    crossing = (a[:, 0] <= x) != (b[:, 0] <= x)
    s = (x - a[crossing, 0]) / (b[crossing, 0] - a[crossing, 0])
    ys = np.sort(a[crossing, 1] + s * (b[crossing, 1] - a[crossing, 1]))
    return ys[0::2], ys[1::2]


def table_friction_load(vertices, twist, friction_load):
    """-(mu N / A) int [v_hat; r x v_hat] dA over the polygon, by iterated integration.

    Along a vertical chord at x, with the rotation center p, a = x - p_x,
    b = y - p_y, rho = |r - p| and v_hat = sign(w) (-b, a) / rho, the y
    integrals are elementary: int b/rho db = rho, int db/rho = asinh(b/|a|),
    int b^2/rho db = (b rho - a^2 asinh(b/|a|)) / 2. Those lose digits to
    cancellation when p is far, where the integrand is smooth: there the chord
    integral is 24-point Gauss-Legendre on v_hat itself. The x integral is
    adaptive (scipy quad_vec) between the vertices' abscissae and p_x.
    """
    area, centroid = shoelace(vertices)
    v, w = np.asarray(twist[:2], dtype=float), float(twist[2])
    size = np.max(np.linalg.norm(vertices - centroid, axis=1))
    breaks = vertices[:, 0]
    if np.linalg.norm(v + w * np.array([-centroid[1], centroid[0]])) > 3.0 * size * abs(w):
        nodes, weights = np.polynomial.legendre.leggauss(24)

        def inner(x):
            total = np.zeros(3)
            for low, high in zip(*chords(vertices, x), strict=True):
                y = 0.5 * (high + low) + 0.5 * (high - low) * nodes
                velocity = np.column_stack([v[0] - w * y, v[1] + w * x + 0.0 * y])
                unit = velocity / np.linalg.norm(velocity, axis=1)[:, None]
                values = np.column_stack([unit, x * unit[:, 1] - y * unit[:, 0]])
                total += 0.5 * (high - low) * weights @ values
            return total
    else:
        px, py, sign = -v[1] / w, v[0] / w, np.sign(w)

        def inner(x):
            low, high = chords(vertices, x)
            a = x - px

            def primitive(y):
                b = y - py
                rho = np.hypot(a, b)
                asinh = np.arcsinh(b / abs(a)) if a != 0.0 else np.zeros_like(b)
                return np.array([-rho, a * asinh, x * a * asinh + (b * rho - a * a * asinh) / 2 + py * rho])

            return sign * np.sum(primitive(high) - primitive(low), axis=1)

        breaks = np.append(breaks, px)
    low, high = vertices[:, 0].min(), vertices[:, 0].max()
    knots = np.concatenate([[low], np.unique(breaks[(breaks > low) & (breaks < high)]), [high]])
    total = sum(quad_vec(inner, x0, x1, epsabs=1e-13, epsrel=1e-12, limit=400)[0]
                for x0, x1 in zip(knots[:-1], knots[1:], strict=True))
    return -friction_load * total / area


@st.composite
def polygons(draw):
    """Star-shaped polygons (mostly non-convex) and convex hulls of random points, 3-12 vertices, ~0.05-0.5 m."""
    size = draw(st.floats(0.05, 0.5))
    centre = np.array([draw(st.floats(-1.0, 1.0)), draw(st.floats(-1.0, 1.0))])
    count = draw(st.integers(3, 12))
    if draw(st.booleans()):
        gaps = np.array(draw(st.lists(st.floats(0.2, 1.0), min_size=count, max_size=count)))
        angles = np.cumsum(gaps / gaps.sum() * 2 * np.pi)
        assume(np.max(gaps / gaps.sum() * 2 * np.pi) < 0.9 * np.pi)
        radii = np.array(draw(st.lists(st.floats(0.25, 1.0), min_size=count, max_size=count)))
        vertices = np.column_stack([radii * np.cos(angles), radii * np.sin(angles)])
    else:
        cloud = np.array(draw(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=count + 3,
                                       max_size=count + 3)))
        assume(np.linalg.matrix_rank(cloud - cloud.mean(axis=0), tol=1e-3) == 2)
        hull = ConvexHull(cloud)
        vertices = cloud[hull.vertices]
        assume(len(vertices) >= 3 and hull.volume > 0.05)
    vertices = centre + size * vertices
    # hull vertices may nearly coincide: the footprint validation rejects a vertex repeated within 1e-12 of the
    # size, and an edge that short also counts as folding back or touching its neighbours (tolerances ~1e-12
    # size^2); keep edges clear of those by three orders of magnitude
    edges = np.linalg.norm(np.roll(vertices, -1, axis=0) - vertices, axis=1)
    assume(edges.min() > 1e-9 * np.ptp(vertices, axis=0).max())
    return vertices


@st.composite
def pushes(draw):
    """A polygon, a contact inside an edge, an approaching velocity and a contact friction coefficient."""
    vertices = draw(polygons())
    k = len(vertices)
    edge = draw(st.integers(0, k - 1))
    start, end = vertices[edge], vertices[(edge + 1) % k]
    contact = start + draw(st.floats(0.02, 0.98)) * (end - start)
    tangent = (end - start) / np.linalg.norm(end - start)
    inward = np.array([-tangent[1], tangent[0]])
    angle = draw(st.floats(-1.5, 1.5))
    speed = draw(st.floats(0.01, 2.0))
    velocity = speed * (np.cos(angle) * inward + np.sin(angle) * tangent)
    return vertices, contact, velocity, draw(st.floats(0.0, 1.5))


def check_mode_conditions(prediction, mu, friction_load):
    """The friction cone and contact kinematics that define each mode; the power balance."""
    n, t = prediction.contact.normal, np.array([-prediction.contact.normal[1], prediction.contact.normal[0]])
    f = prediction.contact_force
    c = prediction.contact.point
    v, w = prediction.twist[:2], prediction.twist[2]
    u = v + w * np.array([-c[1], c[0]])  # object's contact-point velocity
    vp = prediction.pusher_velocity
    scale = np.linalg.norm(vp)
    fn, ft = f @ n, f @ t
    slip = (vp - u) @ t
    if prediction.mode is ContactMode.SEPARATING:
        assert vp @ n <= 1e-12 * scale and not np.any(f) and not np.any(prediction.twist)
        return
    # u is a difference of numbers of size |v| + |w| |c|, which is ~|vp| unless the object spins fast (pushed
    # straight at a pivot it nearly balances on, it may spin 1e10 times faster than the finger moves): allow a few
    # hundred units of rounding of those numbers on top of the relative tolerance (negligible in ordinary pushes)
    rounding = 64 * np.finfo(float).eps * (np.linalg.norm(v) + abs(w) * np.linalg.norm(c))
    kinematic = 1e-9 * scale + rounding
    assert fn > 0.0
    assert abs((u - vp) @ n) <= kinematic, "the finger must neither penetrate nor leave"
    if prediction.mode is ContactMode.STICKING:
        assert abs(ft) <= mu * fn * (1 + 1e-9) + 1e-12 * np.linalg.norm(f)
        assert np.linalg.norm(u - vp) <= kinematic
    else:
        side = 1.0 if prediction.mode is ContactMode.SLIDING_LEFT else -1.0
        assert ft == pytest.approx(side * mu * fn, rel=1e-9, abs=1e-12 * np.linalg.norm(f))
        assert side * slip >= -kinematic, "the finger slides toward the side its friction drags the object"
    # the finger's power feeds the table friction and the contact sliding (the twist's scale is known to the
    # same rounding relative to |vp|; the forces balance to a tolerance relative to mu N, not to |f|, which is
    # tiny when the support nearly pivots freely: that costs power relative to mu N times the contact's speeds)
    speeds = scale + np.linalg.norm(u)
    assert prediction.power == pytest.approx(prediction.support_power + mu * fn * abs(slip),
                                             rel=1e-9 + rounding / scale, abs=1e-9 * friction_load * speeds)
    assert prediction.power >= 0.0


@PROPERTY
@given(pushes(), st.floats(0.1, 1.0), st.floats(0.5, 20.0))
def test_push_balance_against_independent_friction_integral(push, support_friction, weight):
    vertices, contact, velocity, mu = push
    obj = make_pushed_object(vertices, support_friction, weight)
    prediction = predict_push(obj, contact, velocity, mu)
    event(prediction.mode.value)
    check_mode_conditions(prediction, mu, support_friction * weight)
    assume(prediction.mode is not ContactMode.SEPARATING)
    f = prediction.contact_force
    finger = np.array([*f, moment(contact, f)])
    table = table_friction_load(vertices, prediction.twist, support_friction * weight)
    assert np.linalg.norm(finger + table) <= 1e-6 * np.linalg.norm(finger)


def check_balance_with_support_points(vertices, points, weights, contact, velocity, mu):
    """Predict a push on weighted support points and check it against a direct sum of Coulomb forces; a point the
    motion leaves at rest may exert any static friction up to its share of mu N, which must then explain the
    remainder. Returns the prediction, or None when the support is rejected as a single point."""
    size = np.ptp(vertices, axis=0).max()
    try:
        obj = make_pushed_object(vertices, 0.5, 3.0, support_points=points, support_weights=weights)
    except InputError as error:  # points within 1e-10 footprint radii (chained: < 40 of them) are one point
        assert "2 distinct points" in str(error)
        assert np.max(np.linalg.norm(points - points[0], axis=1)) <= 1e-8 * size
        return None
    prediction = predict_push(obj, contact, velocity, mu)
    check_mode_conditions(prediction, mu, obj.friction_load)
    if prediction.mode is ContactMode.SEPARATING:
        return prediction
    capacity = 0.5 * 3.0 * weights / weights.sum()
    v, w = prediction.twist[:2], prediction.twist[2]
    f = prediction.contact_force
    residual = np.array([*f, moment(contact, f)])
    lever = np.column_stack([-points[:, 1], points[:, 0]])
    point_velocity = v + w * lever
    speed = np.linalg.norm(point_velocity, axis=1)
    # v + w perp(r) is a difference of numbers of size |v| + |w| |r|, v itself computed from numbers of size
    # |w| times the footprint size: below 1e-9 of those its direction is rounding noise (not even 1e-7
    # accurate), so such a point counts as at rest: whether resting or crawling, it exerts a force up to its share
    slow = speed <= 1e-9 * (np.linalg.norm(v) + abs(w) * (np.linalg.norm(points, axis=1) + size))
    friction = -capacity[~slow, None] * point_velocity[~slow] / speed[~slow, None]
    residual += np.array([*friction.sum(axis=0), np.sum(lever[~slow] * friction)])
    # rounding in this sum is relative to its largest terms: the finger force and the support points' forces
    scale = np.linalg.norm(f) + capacity.sum()
    if not slow.any():
        assert np.linalg.norm(residual) <= 1e-6 * scale
        return prediction
    # the remainder is the slow points' forces g_j, |g_j| <= capacity_j, at r_j: a force through the slowest point
    # within their joint friction disk, up to the couple their spread allows (one point, or coincident ones: none)
    resting = int(np.argmin(speed))
    force = residual[:2]
    spread = capacity[slow] @ np.linalg.norm(points[slow] - points[resting], axis=1)
    assert abs(residual[2] - moment(points[resting], force)) <= spread + 1e-6 * scale * (1 + np.abs(
        points[resting]).max())
    assert np.linalg.norm(force) <= capacity[slow].sum() * (1 + 1e-6)
    return prediction


@PROPERTY
@given(pushes(), st.integers(2, 40), st.randoms(use_true_random=False))
def test_push_balance_with_weighted_support_points(push, count, random):
    """Given support points: the balance against a direct sum of Coulomb forces, with static friction at rest."""
    vertices, contact, velocity, mu = push
    area, centroid = shoelace(vertices)
    points = centroid + 0.3 * (np.array([[random.uniform(-1, 1), random.uniform(-1, 1)] for _ in range(count)])
                               * np.sqrt(area))
    points = points[contains(vertices, points)]
    assume(len(points) >= 2 and len(np.unique(points, axis=0)) == len(points))
    weights = np.array([random.uniform(0.1, 1.0) for _ in points])
    prediction = check_balance_with_support_points(vertices, points, weights, contact, velocity, mu)
    assume(prediction is not None and prediction.mode is not ContactMode.SEPARATING)
    event(prediction.mode.value)
    speeds = np.linalg.norm(prediction.twist[:2] + prediction.twist[2] * np.column_stack([-points[:, 1], points[:, 0]]),
                            axis=1)
    event("rotation about a support point" if speeds.min() <= 1e-9 * np.linalg.norm(velocity) else "smooth")


TRIANGLE = np.array([[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]])
SIXTH = 1.0 / 6.0  # the triangle's centroid coordinate

# Support points bunched together, collinear or on the push line, frictionless fingers: the degenerate supports
# hypothesis shrank failures to (singular ellipsoid guess, Newton stalled at rounding, a pivot on points 1e-13
# apart credited with one's friction, a frictionless finger called sticking with |f . t| ~ 3e-10 |f|). Each with
# (footprint, support points, weights, contact, finger velocity, contact friction).
DEGENERATE_SUPPORTS = {
    # a pair 1e-10 apart: the object all but pivots freely on it (finger force ~1e-9 N); singular 2x2 solve before
    "pair_1e-10_apart": (TRIANGLE, [[SIXTH, SIXTH], [SIXTH, 0.16666666677273267]], [1.0, 1.0], [0.25, 0.0],
                         [0.0, 1.0], 0.0),
    # the same pair, slanted push: the slower point crawls in an unresolved direction, a couple of 0.75 N x 1e-10 m
    "pair_slanted_push": (TRIANGLE, [[SIXTH, SIXTH], [SIXTH, 0.16666666677273267]], [1.0, 1.0], [0.25, 0.0],
                          [0.8414709848078965, 0.5403023058681398], 0.0),
    # pushed straight at the pair: sticking would need |f . t| = 3e-10 |f|, more than a frictionless finger has;
    # it slides and the object spins about the pair (1e10 times faster than the finger moves)
    "frictionless_push_through_pair": (TRIANGLE, [[SIXTH, SIXTH], [SIXTH, 0.16666666677273267]], [1.0, 1.0],
                                       [0.25, 0.25], [-0.7071067811865475, -0.7071067811865475], 0.0),
    # three collinear points, two 6e-9 apart: the minimum rotates between those two (Newton stalled at 2e-9)
    "collinear_with_close_pair": ([[-0.5, 0.0], [0.0, 0.0], [0.0, 0.5]],
                                  [[-SIXTH, 0.16666667298869392], [-SIXTH, SIXTH], [-0.06060064948868453, SIXTH]],
                                  [1.0, 1.0, 1.0], [-0.375, 0.0], [0.0, 1.0], 0.0),
    # pivot on two points 1e-39 apart, one of them needing more than its own share of static friction
    "pivot_on_coincident_pair": ([[0.5, 0.0], [-0.5, 0.5], [0.0, 0.0]],
                                 [[0.0, SIXTH], [1.2468000402578695e-39, SIXTH], [0.10606601717798213, SIXTH]],
                                 [0.5, 1.0, 1.0], [0.25, 0.125], [-0.4472135954999579, -0.8944271909999159], 0.0),
    # five collinear points, two 7.5e-14 apart, pivoting on that pair while the finger slides (mu 1)
    "pivot_on_pair_1e-13_apart": ([[0.5, 0.0], [0.0, 0.0], [0.0, -0.25]],
                                  [[SIXTH, -0.08333333333333333], [SIXTH, -0.06458333333333333],
                                   [SIXTH, -0.04583333333333333], [SIXTH, -0.008333333333333331],
                                   [0.16666666666674165, -0.08333333333333333]],
                                  [1.0, 1.0, 0.5, 1.0, 1.0], [0.25, 0.0], [0.8414709848078965, -0.5403023058681398],
                                  1.0),
    # the pivot at the object-frame origin (its velocity there is rounding of order 1e-17 m/s)
    "pivot_at_the_frame_origin": ([[3.061616997868383e-17, 0.5], [-0.25, 3.061616997868383e-17],
                                   [-9.184850993605148e-17, -0.5], [0.25, -6.123233995736766e-17]],
                                  [[-1.3877787807814457e-17, -4.625929269271485e-18], [-1.3877787807814457e-17, 0.15]],
                                  [1.0, 1.0], [-0.125, 0.25], [0.8944271909999157, -0.44721359549995804], 0.0),
    # ten of fifteen points in a row: the sticking slope bends sharply as the center of rotation crosses the row,
    # and safeguarded Newton zigzagged across the bend without shrinking its bracket
    "row_of_points": ([[0.2371331433484417, 0.10604740570767407], [0.07907330446400251, 0.1656927202993712],
                       [0.03508168981626167, 0.11997614362712115], [-0.17365287361751308, 0.40156061744695537],
                       [-0.14627093949601255, 0.1409417535152512], [-0.3540007133796415, 0.061918378141751336],
                       [-0.3692032147326829, -0.26269992740016584], [-0.13164148154552924, -0.3511346185389559],
                       [0.11401549190285007, -0.38992246678814385], [0.30007657443000624, -0.22489786454822763],
                       [0.2423899661995616, -0.061213595595875504], [0.1875, -2.1245770866179924e-16]],
                      [[0.09591446712618826, -0.0879870387418932], [0.03400116637174983, 0.07711509660327592],
                       [-0.06918766821898087, -0.0879870387418932], [0.1165522340443344, -0.0879870387418932],
                       [-0.1311009689734193, -0.23245140716891619], [-0.00727436746454245, -0.0879870387418932],
                       [-0.04854990130083473, 0.03583956276698362], [-0.1311009689734193, 0.07711509660327592],
                       [0.03400116637174983, -0.0879870387418932], [-0.17237650280971156, -0.0879870387418932],
                       [-0.04854990130083473, 0.07711509660327592], [-0.08982543513712701, -0.0879870387418932],
                       [-0.1620576193506385, -0.0879870387418932], [-0.04854990130083473, -0.0879870387418932],
                       [-0.1930142697278577, -0.0879870387418932]],
                      [1.0, 1.0, 1.0, 1.0, 0.875, 0.75, 0.75, 0.75, 1.0, 0.75, 0.5, 0.5, 0.9375, 0.75, 0.875],
                      [0.11117920923740424, 0.15357726577293274], [0.66321044302289, -0.7484329684516725], 0.0),
}


@pytest.mark.parametrize("name", DEGENERATE_SUPPORTS)
def test_push_on_degenerate_support_points_balances(name):
    vertices, points, weights, contact, velocity, mu = (np.asarray(value, dtype=float) if index < 5 else value
                                                        for index, value in enumerate(DEGENERATE_SUPPORTS[name]))
    prediction = check_balance_with_support_points(vertices, points, weights, contact, velocity, mu)
    assert prediction is not None and prediction.mode is not ContactMode.SEPARATING


def test_push_support_points_closer_than_the_merge_distance_act_as_one():
    """Points 1e-13 m apart on a 1 m square are one point carrying both weights; all of them one point: rejected."""
    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    obj = make_pushed_object(square, 0.5, 2.0, support_points=[[0.2, 0.3], [0.2 + 1e-13, 0.3], [0.8, 0.6]],
                             support_weights=[1.0, 2.0, 1.0])
    points, weights = obj.support_points()
    np.testing.assert_allclose(points, [[0.2, 0.3], [0.8, 0.6]], atol=1e-12)
    np.testing.assert_allclose(weights, [0.75, 0.25])
    with pytest.raises(InputError, match="2 distinct points"):
        make_pushed_object(square, 0.5, 2.0, support_points=[[0.2, 0.3], [0.2, 0.3 + 1e-13]],
                           support_weights=[1.0, 1.0])


def mason_votes(contact, normal, velocity, mu, centre_of_friction):
    """Mason's voting rule: each of the friction cone's two edges and the pushing direction, as lines through
    the contact, votes with the sign of its moment about the centre of friction; the majority gives the sense."""
    tangent = np.array([-normal[1], normal[0]])
    lever = contact - centre_of_friction
    votes = [moment(lever, normal + mu * tangent), moment(lever, normal - mu * tangent),
             moment(lever, velocity / np.linalg.norm(velocity))]
    return votes


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
@given(pushes())
def test_push_rotation_sense_follows_mason_voting_rule(push):
    vertices, contact, velocity, mu = push
    obj = make_pushed_object(vertices, 0.5, 1.0)
    prediction = predict_push(obj, contact, velocity, mu)
    assume(prediction.mode is not ContactMode.SEPARATING and not prediction.is_translation)
    _, centre_of_friction = shoelace(vertices)
    size = np.ptp(vertices, axis=0).max()
    votes = mason_votes(contact, prediction.contact.normal, velocity, mu, centre_of_friction)
    assume(min(abs(vote) for vote in votes) > 1e-3 * size)
    majority = np.sign(sum(np.sign(votes)))
    assert np.sign(prediction.twist[2]) == majority


def regular_polygon(count, radius, centre=(0.0, 0.0)):
    angles = 2 * np.pi * np.arange(count) / count
    return np.column_stack([radius * np.cos(angles), radius * np.sin(angles)]) + np.asarray(centre)


SYMMETRIC = {
    "square": np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]),
    "rectangle_off_origin": np.array([[0.3, 0.1], [0.5, 0.1], [0.5, 0.16], [0.3, 0.16]]),
    "hexagon": regular_polygon(6, 0.08),
    # non-convex, symmetric about the x axis: a notched arrow pushed at its tail
    "arrow": np.array([[-0.1, -0.02], [0.02, -0.02], [0.02, -0.06], [0.1, 0.0], [0.02, 0.06], [0.02, 0.02],
                       [-0.1, 0.02]]),
}


@pytest.mark.parametrize("name", SYMMETRIC)
@pytest.mark.parametrize("grid_points", [0, 400])
@pytest.mark.parametrize("contact_friction", [0.0, 0.4])
def test_push_through_the_centre_of_a_symmetric_object_translates(name, grid_points, contact_friction):
    vertices = SYMMETRIC[name]
    area, centroid = shoelace(vertices)
    # the edge midpoint whose inward normal passes through the centroid (the leftmost edge here)
    k = len(vertices)
    mids = [(vertices[i] + vertices[(i + 1) % k]) / 2 for i in range(k)]
    i = int(np.argmin([m[0] for m in mids]))
    contact = mids[i]
    direction = centroid - contact
    obj = make_pushed_object(vertices, 0.6, 2.0, grid_points=grid_points)
    prediction = predict_push(obj, contact, 0.1 * direction / np.linalg.norm(direction), contact_friction)
    assert prediction.mode is ContactMode.STICKING
    assert prediction.is_translation
    assert abs(prediction.twist[2]) * np.sqrt(area) <= 1e-9 * 0.1
    np.testing.assert_allclose(prediction.twist[:2], 0.1 * direction / np.linalg.norm(direction), atol=1e-12)
    # a translating object needs mu N along the motion, whatever the pressure model
    np.testing.assert_allclose(prediction.contact_force, 0.6 * 2.0 * direction / np.linalg.norm(direction),
                               rtol=1e-9, atol=1e-12)


def test_push_grid_pressure_converges_to_the_exact_uniform_model():
    vertices = SYMMETRIC["arrow"]
    exact = make_pushed_object(vertices, 0.5, 1.0)
    contact, velocity = np.array([0.02, -0.04]), np.array([0.05, 0.08])
    reference = predict_push(exact, contact, velocity, 0.3)
    errors = []
    for count in (100, 400, 1600):
        grid = make_pushed_object(vertices, 0.5, 1.0, grid_points=count)
        assert grid.pressure_model is PressureModel.UNIFORM_GRID
        errors.append(np.linalg.norm(predict_push(grid, contact, velocity, 0.3).twist - reference.twist))
    assert errors[2] < errors[0] and errors[2] < 0.02 * np.linalg.norm(reference.twist)


def test_push_prediction_is_independent_of_where_the_object_frame_is():
    """Moving and rotating the object frame moves and rotates the answer, nothing else."""
    vertices = SYMMETRIC["arrow"]
    contact, velocity = np.array([0.02, -0.04]), np.array([0.05, 0.08])
    base = predict_push(make_pushed_object(vertices, 0.5, 1.0), contact, velocity, 0.3)
    angle, shift = 0.7, np.array([1.5, -2.0])
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    moved = predict_push(make_pushed_object(vertices @ rotation.T + shift, 0.5, 1.0), rotation @ contact + shift,
                         rotation @ velocity, 0.3)
    assert moved.mode is base.mode
    assert moved.twist[2] == pytest.approx(base.twist[2], rel=1e-9)
    np.testing.assert_allclose(moved.contact_force, rotation @ base.contact_force, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(moved.center_of_rotation, rotation @ base.center_of_rotation + shift, rtol=1e-9)
    # the velocity of a material point is the rotated one
    point = np.array([0.05, 0.01])
    base_velocity = base.twist[:2] + base.twist[2] * np.array([-point[1], point[0]])
    moved_point = rotation @ point + shift
    moved_velocity = moved.twist[:2] + moved.twist[2] * np.array([-moved_point[1], moved_point[0]])
    np.testing.assert_allclose(moved_velocity, rotation @ base_velocity, rtol=1e-9, atol=1e-12)


def test_push_clockwise_footprint_is_reversed_with_a_warning(caplog):
    vertices = SYMMETRIC["arrow"]
    with caplog.at_level(logging.WARNING):
        reversed_obj = make_pushed_object(vertices[::-1], 0.5, 1.0)
    assert "clockwise" in caplog.text
    contact, velocity = np.array([0.02, -0.04]), np.array([0.05, 0.08])
    a = predict_push(make_pushed_object(vertices, 0.5, 1.0), contact, velocity, 0.3)
    b = predict_push(reversed_obj, contact, velocity, 0.3)
    np.testing.assert_allclose(a.twist, b.twist, rtol=1e-12)


def test_push_away_from_the_object_separates():
    obj = make_pushed_object(SYMMETRIC["square"], 0.5, 1.0)
    prediction = predict_push(obj, (-0.05, 0.0), (-0.1, 0.02), 0.3)
    assert prediction.mode is ContactMode.SEPARATING
    assert prediction.power == 0.0 and not np.any(prediction.twist)
    assert np.all(np.isnan(prediction.center_of_rotation))


def test_push_translation_reports_a_far_center_of_rotation_perpendicular_to_the_motion():
    obj = make_pushed_object(SYMMETRIC["square"], 0.5, 1.0)
    prediction = predict_push(obj, (-0.05, 0.0), (0.1, 0.0), 0.3)
    assert prediction.is_translation
    # 1e6 footprint radii away, on the +perp(v) side: (0, +d)
    radius = np.hypot(0.05, 0.05)
    np.testing.assert_allclose(prediction.center_of_rotation, [0.0, 1e6 * radius], rtol=1e-12)


BOW_TIE = [[0, 0], [1, 1], [1, 0], [0, 1]]
SQUARE = SYMMETRIC["square"].tolist()


@pytest.mark.parametrize("footprint, match", [
    ([], "empty"),
    ([[0, 0], [1, 0]], "at least 3"),
    (BOW_TIE, "self-intersecting"),
    ([[0, 0], [1, 0], [float("nan"), 1]], "finite"),
    ([[0, 0], [1, 0], [2, 0]], "zero area"),
    ([[0, 0], [1, 0], [1, 0], [0, 1]], "coincide"),
    ([[0, 0], [1e200, 0], [0, 1e200]], "within 1000 m of the object frame's origin, got a coordinate of 1e"),
])
def test_push_bad_footprint_is_rejected_with_a_clear_message(footprint, match):
    with pytest.raises(InputError, match=match):
        make_pushed_object(footprint, 0.5, 1.0)


@pytest.mark.parametrize("fields, match", [
    ({"support_friction": -0.1}, "support_friction"),
    ({"support_friction": 0.0}, "support_friction"),
    ({"normal_force": float("nan")}, "normal_force"),
    ({"support_points": [[0.0, 0.0], [0.2, 0.0]], "support_weights": [1.0, 1.0]}, "outside the footprint"),
    ({"support_points": [[0.0, 0.0], [0.01, 0.0]], "support_weights": [1.0]}, "one weight per support point"),
    ({"support_points": [[0.0, 0.0], [0.01, 0.0]], "support_weights": [1.0, -1.0]}, "support_weights"),
    ({"support_points": [[0.0, 0.0]], "support_weights": [1.0]}, "at least 2 distinct"),
])
def test_push_bad_object_fields_are_rejected(fields, match):
    arguments = {"footprint": SQUARE, "support_friction": 0.5, "normal_force": 1.0, **fields}
    with pytest.raises(InputError, match=match):
        make_pushed_object(**arguments)


@pytest.mark.parametrize("contact, velocity, mu, radius, match", [
    ((-0.04, 0.0), (0.1, 0.0), 0.3, 0.0, "off the footprint outline"),
    ((-0.05, 0.0), (0.0, 0.0), 0.3, 0.0, "zero"),
    ((-0.05, 0.0), (float("nan"), 0.0), 0.3, 0.0, "pusher_velocity: values must be finite"),
    ((-0.05, float("inf")), (0.1, 0.0), 0.3, 0.0, "contact_point: values must be finite"),
    ((-0.05, 0.0), (0.1, 0.0), -0.3, 0.0, "contact_friction"),
    ((-0.05, 0.0), (0.1, 0.0), 0.3, -0.01, "pusher_radius"),
])
def test_push_bad_prediction_input_is_rejected(contact, velocity, mu, radius, match):
    obj = make_pushed_object(SQUARE, 0.5, 1.0)
    with pytest.raises(InputError, match=match):
        predict_push(obj, contact, velocity, mu, pusher_radius=radius)


def test_push_round_finger_that_would_overlap_a_notch_is_rejected():
    notched = [[0, 0], [0.1, 0], [0.1, 0.1], [0.06, 0.1], [0.06, 0.05], [0.04, 0.05], [0.04, 0.1], [0, 0.1]]
    obj = make_pushed_object(notched, 0.5, 1.0)
    predict_push(obj, (0.05, 0.05), (0.0, -0.1), 0.3, pusher_radius=0.009)
    with pytest.raises(InputError, match="overlap"):
        predict_push(obj, (0.05, 0.05), (0.0, -0.1), 0.3, pusher_radius=0.015)


def test_push_sticking_rotation_about_a_heavy_support_point_on_the_push_line():
    """The sticking motions' centers of rotation lie on the line through the contact perpendicular to the push;
    a heavy support point on that line becomes the pivot (a kink of P): the finger force and that point's
    static friction, within its share of mu N, balance the other points' Coulomb forces."""
    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    points = np.array([[0.0, 0.8], [0.9, 0.5], [0.6, 0.1]])
    weights = np.array([10.0, 1.0, 1.0])
    obj = make_pushed_object(square, 0.5, 2.0, support_points=points, support_weights=weights)
    contact, velocity = np.array([0.0, 0.2]), np.array([1.0, 0.0])
    prediction = predict_push(obj, contact, velocity, 0.8)
    assert prediction.mode is ContactMode.STICKING
    np.testing.assert_allclose(prediction.center_of_rotation, points[0], atol=1e-12)
    check_mode_conditions(prediction, 0.8, obj.friction_load)
    capacity = 0.5 * 2.0 * weights / weights.sum()
    f = prediction.contact_force
    residual = np.array([*f, moment(contact, f)])
    for point, limit in zip(points[1:], capacity[1:], strict=True):
        v = prediction.twist[:2] + prediction.twist[2] * np.array([-point[1], point[0]])
        friction = -limit * v / np.linalg.norm(v)
        residual += np.array([*friction, moment(point, friction)])
    static = -residual[:2]  # the pivot's friction must cancel the remaining force, and its moment with it
    assert residual[2] == pytest.approx(moment(points[0], residual[:2]), abs=1e-12)
    assert np.linalg.norm(static) <= capacity[0]


@pytest.mark.parametrize("vertices", [SYMMETRIC["arrow"], regular_polygon(40, 0.07, centre=(0.02, -0.01))],
                         ids=["arrow", "40-gon"])
@pytest.mark.parametrize("distance", [0.3, 2.0, 9.9, 10.1, 1e5, np.inf])
def test_push_support_wrench_matches_the_independent_integral_near_and_far(vertices, distance):
    """The exact uniform model on both sides of its closed-form / quadrature switch (10 footprint radii):
    its gradient is the (negated) table load of the iterated integral, its Hessian the gradient's derivative."""
    from discrete_robot.pushing.support import UniformPolygonSupport

    support = UniformPolygonSupport(vertices)
    direction = np.array([0.6, -0.8])
    if np.isinf(distance):
        twist = np.array([0.3, 0.4, 0.0])
    else:
        cor = support.centroid + distance * support.radius * direction
        twist = np.array([cor[1], -cor[0], 1.0]) * 0.5  # rotation about cor, omega = 0.5
    power, gradient, hessian = support.dissipation(twist, hessian=True)
    load = table_friction_load(vertices, twist, 1.0)
    np.testing.assert_allclose(gradient, -load, rtol=1e-9, atol=1e-10 * np.abs(load).max())
    assert power == pytest.approx(gradient @ twist, rel=1e-12)
    step = 1e-6 * np.linalg.norm(twist)
    numeric = np.array([(support.dissipation(twist + step * e)[1] - support.dissipation(twist - step * e)[1])
                        / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-6 * np.abs(hessian).max())
