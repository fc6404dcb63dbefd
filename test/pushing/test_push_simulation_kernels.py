"""The push simulation's compiled geometry against the numpy polygon functions (the batched second formulation), and
a finger move whose prediction the kernel hands back to Python (a sliding Newton solve stalled at a kink of P)."""

import numpy as np
import pytest

from discrete_robot.geometry2d import se2_exp_step
from discrete_robot.pushing import polygon, push_kernels
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.pushing.simulation import clearance, push_step

POLYGONS = {
    "square": [[-0.04, -0.04], [0.04, -0.04], [0.04, 0.04], [-0.04, 0.04]],
    "triangle": [[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]],
    "l_shape": [[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]],
}


@pytest.mark.parametrize("name", POLYGONS)
def test_kernel_geometry_matches_numpy_polygon(name):
    vertices = polygon.as_footprint(POLYGONS[name])
    size = float(np.ptp(vertices, axis=0).max())
    rng = np.random.default_rng(3)
    points = vertices.mean(axis=0) + rng.uniform(-size, size, (300, 2))
    inside = polygon.contains(vertices, points)
    for point, within in zip(points, inside, strict=True):
        assert push_kernels.inside(vertices, point[0], point[1]) == within
        move = rng.uniform(-size, size, 2)
        radius = float(rng.choice([0.0, 0.05 * size]))
        expected = polygon.first_contact_fraction(vertices, point, move, radius)
        fraction = push_kernels.first_contact_fraction(vertices, point[0], point[1], move[0], move[1], radius)
        if expected is None:
            assert fraction == -1.0
        else:
            assert fraction == pytest.approx(expected, rel=1e-12, abs=1e-15)
        _, _, _, edge, parameter = polygon._nearest_on_outline(vertices, point[0], point[1])
        for t in (parameter, 0.0, 1e-12, 1.0):
            np.testing.assert_allclose(push_kernels.outline_normal(vertices, edge, t, 1e-9 * size),
                                       polygon.outline_normal(vertices, edge, t, 1e-9 * size), rtol=0, atol=1e-15)


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
