"""The push simulation's compiled polygon geometry against an independent one (matplotlib's point-in-polygon test,
the clearance along a move), and a finger move whose prediction the kernel hands back to Python (a sliding Newton
solve stalled at a kink of P)."""

import numpy as np
import pytest

from discrete_robot.geometry2d import se2_exp_step
from discrete_robot.pushing import polygon
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.pushing.simulation import clearance, push_step

POLYGONS = {
    "square": [[-0.04, -0.04], [0.04, -0.04], [0.04, 0.04], [-0.04, 0.04]],
    "triangle": [[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]],
    "l_shape": [[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]],
}


def _signed_gap(vertices, point, radius) -> float:
    """A finger disk's clearance to the polygon (m; negative: overlap), from matplotlib's point-in-polygon test and
    the outline's nearest point, a formulation the kernels do not share."""
    from matplotlib.path import Path as PolygonPath

    distance = polygon.closest_on_outline(vertices, point)[1]
    return (-distance if PolygonPath(vertices).contains_point(point) else distance) - radius


@pytest.mark.parametrize("name", POLYGONS)
def test_the_compiled_polygon_geometry_against_an_independent_one(name):
    """Inside: matplotlib's even-odd test. First contact of a moving finger disk: the first zero of its clearance
    along the move (a 400-point scan, then bisection to 1e-13). Outline normal: the edge turned by +90° (the
    footprint is counter-clockwise), and at a vertex the bisector of the two edges' normals."""
    from matplotlib.path import Path as PolygonPath

    vertices = polygon.as_footprint(POLYGONS[name])
    size = float(np.ptp(vertices, axis=0).max())
    rng = np.random.default_rng(3)
    points = vertices.mean(axis=0) + rng.uniform(-size, size, (300, 2))
    np.testing.assert_array_equal(polygon.contains(vertices, points), PolygonPath(vertices).contains_points(points))
    checked = 0
    for point in points:
        move, radius = rng.uniform(-size, size, 2), float(rng.choice([0.0, 0.05 * size]))
        gaps = np.array([_signed_gap(vertices, point + s * move, radius) for s in np.linspace(0.0, 1.0, 401)])
        if gaps[0] <= 1e-9 * size or np.any(np.abs(gaps) < 1e-3 * size):
            continue        # starting in contact, or grazing: the scan cannot tell
        fraction = polygon.first_contact_fraction(vertices, point[0], point[1], move[0], move[1], radius)
        touching = np.flatnonzero(gaps <= 0.0)
        if touching.size == 0:
            assert fraction == -1.0
        else:
            low, high = (touching[0] - 1) / 400, touching[0] / 400
            while high - low > 1e-13:
                middle = 0.5 * (low + high)
                low, high = (low, middle) if _signed_gap(vertices, point + middle * move, radius) <= 0.0 else (
                    middle, high)
            assert fraction == pytest.approx(high, abs=1e-12)
        checked += 1
    assert checked > 100
    k = len(vertices)
    for edge in range(k):
        turned = np.array([-1.0, 1.0]) * (vertices[(edge + 1) % k] - vertices[edge])[::-1]
        inward = turned / np.linalg.norm(turned)
        np.testing.assert_allclose(polygon.outline_normal(vertices, edge, 0.5, 1e-9 * size), inward, atol=1e-15)
        before = np.array([-1.0, 1.0]) * (vertices[edge] - vertices[edge - 1])[::-1]
        bisector = inward + before / np.linalg.norm(before)
        np.testing.assert_allclose(polygon.outline_normal(vertices, edge, 0.0, 1e-9 * size),
                                   bisector / np.linalg.norm(bisector), atol=1e-15)


# three collinear support points, two 6e-9 apart: the kernel's sliding Newton solve stalls (test_push_prediction's
# "collinear_with_close_pair"); the push is the one prediction.predict_push makes
FOOTPRINT = [[-0.5, 0.0], [0.0, 0.0], [0.0, 0.5]]
SUPPORT = [[-1.0 / 6.0, 0.16666667298869392], [-1.0 / 6.0, 1.0 / 6.0], [-0.06060064948868453, 1.0 / 6.0]]
CONTACT, VELOCITY = np.array([-0.375, 0.0]), np.array([0.0, 1.0])


def test_push_step_resolves_a_stalled_prediction_in_python():
    obj = make_pushed_object(FOOTPRINT, 0.5, 3.0, support_points=SUPPORT, support_weights=[1.0, 1.0, 1.0])
    move = 1e-4 * obj.scale * VELOCITY                                  # one piece
    step = push_step(obj, [0.0, 0.0, 0.0], CONTACT, CONTACT + move, 0.0)
    expected = predict_push(obj, CONTACT, move, 0.0)
    assert step.mode is expected.mode
    np.testing.assert_allclose(step.prediction.twist, expected.twist, rtol=1e-9, atol=1e-15)
    moved = se2_exp_step(np.zeros(3), expected.twist)
    assert np.max(np.abs(step.pose - moved)) <= 1e-9 * obj.scale    # the separation after it: a first-order nudge
    assert clearance(obj, step.pose, step.finger, 0.0) >= -1e-7 * obj.scale


def test_push_step_in_pieces_is_its_pieces_one_by_one():
    obj = make_pushed_object(FOOTPRINT, 0.5, 3.0, support_points=SUPPORT, support_weights=[1.0, 1.0, 1.0])
    target = CONTACT + 0.05 * obj.scale * VELOCITY                     # three pieces of 2 % of the size
    whole = push_step(obj, [0.0, 0.0, 0.0], CONTACT, target, 0.0)
    pose, fingers = np.zeros(3), [CONTACT + f * (target - CONTACT) for f in np.linspace(0.0, 1.0, 4)]
    for a, b in zip(fingers[:-1], fingers[1:], strict=True):
        piece = push_step(obj, pose, a, b, 0.0)
        pose = piece.pose
    np.testing.assert_array_equal(whole.pose, pose)
    assert whole.mode is piece.mode
    np.testing.assert_array_equal(whole.prediction.twist, piece.prediction.twist)
