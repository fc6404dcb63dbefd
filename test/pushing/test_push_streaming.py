"""The streamed finger (push_predictor_node's streaming mode) without ROS: refused positions leave the object and
the finger where they were; accepted ones push as a finger following the same path does."""

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import ContactMode
from discrete_robot.pushing.streaming import FingerStream

SQUARE = np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]])
RADIUS = 0.01


def stream_along(stream, obj, xs, y=0.0, max_jump=0.5):
    return [stream.push(obj, (x, y), max_jump, 0.3, RADIUS) for x in xs]


def test_streamed_centre_push_translates_the_square_by_the_finger_travel_after_contact():
    """A finger through the centroid along the normal: symmetric, so the object translates, by the finger's travel
    beyond first contact (at x = -0.05 - R)."""
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    stream = FingerStream(pose=np.zeros(3))
    steps = stream_along(stream, obj, np.linspace(-0.2, 0.15, 36))
    assert steps[0].mode is ContactMode.SEPARATING
    assert steps[-1].mode is ContactMode.STICKING
    np.testing.assert_allclose(stream.pose, [0.15 - (-0.05 - RADIUS), 0.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(stream.finger, [0.15, 0.0])


def test_the_first_position_only_places_the_finger():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    stream = FingerStream(pose=np.array([0.3, -0.1, 0.2]))
    step = stream.push(obj, (1.0, 1.0), 0.5, 0.3, RADIUS)
    assert step.mode is ContactMode.SEPARATING
    np.testing.assert_array_equal(stream.pose, [0.3, -0.1, 0.2])
    np.testing.assert_array_equal(stream.finger, [1.0, 1.0])


@pytest.mark.parametrize("position", [(1000.0, 0.0), (1e300, 0.0), (np.nan, 0.0), (0.0, np.inf)])
def test_jumps_and_non_finite_positions_are_refused_and_change_nothing(position):
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    stream = FingerStream(pose=np.zeros(3))
    stream_along(stream, obj, [-0.2, -0.1])
    pose, finger = stream.pose.copy(), stream.finger.copy()
    with pytest.raises(InputError, match="max_finger_jump|non-finite"):
        stream.push(obj, position, 0.5, 0.3, RADIUS)
    np.testing.assert_array_equal(stream.pose, pose)
    np.testing.assert_array_equal(stream.finger, finger)
    stream_along(stream, obj, [0.0])   # and the stream goes on from where it was
    assert stream.pose[0] == pytest.approx(0.0 - (-0.05 - RADIUS), abs=1e-12)


def test_a_jump_of_exactly_the_limit_is_accepted():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    stream = FingerStream(pose=np.zeros(3))
    stream_along(stream, obj, [-0.5, -0.25], max_jump=0.25)
    np.testing.assert_array_equal(stream.finger, [-0.25, 0.0])
