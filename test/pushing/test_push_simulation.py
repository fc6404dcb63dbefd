"""Quasistatic push simulation: geometry (contact made and lost, no overlap), symmetry, rate independence and the
known stable push of a disk."""

import numpy as np
import pytest
from matplotlib.path import Path as MplPath

from discrete_robot.errors import InputError
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import ContactMode, predict_push
from discrete_robot.pushing.simulation import push_step, simulate_push

SQUARE = np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]])


def world_outline(vertices, pose):
    c, s = np.cos(pose[2]), np.sin(pose[2])
    return vertices @ np.array([[c, -s], [s, c]]).T + pose[:2]


def clearance(vertices, pose, point):
    """Distance from a world point to the outline, negative inside (matplotlib's point-in-polygon)."""
    outline = world_outline(vertices, pose)
    a, b = outline, np.roll(outline, -1, axis=0)
    t = np.clip(np.sum((point - a) * (b - a), axis=1) / np.sum((b - a) ** 2, axis=1), 0, 1)
    distance = np.min(np.linalg.norm(a + t[:, None] * (b - a) - point, axis=1))
    return -distance if MplPath(outline).contains_point(point) else distance


def test_push_centre_push_translates_the_square_by_the_finger_travel_after_contact():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    radius = 0.01
    trajectory = simulate_push(obj, (0.0, 0.0, 0.0), [(-0.2, 0.0), (0.15, 0.0)], 0.05, 0.02, 0.3, radius)
    contact_x = -0.05 - radius  # the finger touches at x = -0.06 and pushes to 0.15
    np.testing.assert_allclose(trajectory.poses[-1], [0.15 - contact_x, 0.0, 0.0], atol=1e-12)
    before = trajectory.finger_positions[:, 0] < contact_x - 1e-9
    assert all(m is ContactMode.SEPARATING for m, b in zip(trajectory.modes, before, strict=True) if b)
    assert trajectory.modes[-1] is ContactMode.STICKING
    assert trajectory.times[-1] == pytest.approx(0.35 / 0.05)
    np.testing.assert_allclose(np.diff(trajectory.times)[:-1], 0.02)


def test_push_mirrored_offsets_give_mirrored_motions():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    up = simulate_push(obj, (0.0, 0.0, 0.0), [(-0.2, 0.03), (0.15, 0.03)], 0.05, 0.02, 0.3, 0.01)
    down = simulate_push(obj, (0.0, 0.0, 0.0), [(-0.2, -0.03), (0.15, -0.03)], 0.05, 0.02, 0.3, 0.01)
    np.testing.assert_allclose(up.poses * [1, -1, -1], down.poses, atol=1e-9)
    assert abs(up.poses[-1, 2]) > 0.5  # it really turned
    mirror = {ContactMode.SLIDING_LEFT: ContactMode.SLIDING_RIGHT, ContactMode.SLIDING_RIGHT: ContactMode.SLIDING_LEFT}
    assert [mirror.get(m, m) for m in up.modes] == down.modes


def test_push_the_finger_never_overlaps_and_loses_contact_past_a_corner():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    radius = 0.01
    path = [(-0.2, 0.04), (0.1, 0.04), (0.1, 0.3)]
    trajectory = simulate_push(obj, (0.0, 0.0, 0.0), path, 0.05, 0.01, 0.5, radius)
    gaps = np.array([clearance(SQUARE, pose, finger) - radius
                     for pose, finger in zip(trajectory.poses, trajectory.finger_positions, strict=True)])
    assert gaps.min() >= -1e-6 * 0.1
    pushing = np.array([m is not ContactMode.SEPARATING for m in trajectory.modes])
    assert pushing.any()
    assert np.all(np.abs(gaps[pushing]) <= 1e-4), "a pushing finger touches the object"
    # once the finger leaves upward the object stays where it is
    last_push = np.flatnonzero(pushing).max()
    assert last_push < len(trajectory.times) - 1
    assert np.all(trajectory.poses[last_push + 1:] == trajectory.poses[-1])


def test_push_a_finger_passing_beside_the_object_never_moves_it():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    trajectory = simulate_push(obj, (0.3, 0.2, 0.4), [(-0.2, 0.0), (0.5, 0.0)], 0.1, 0.05, 0.3, 0.02)
    np.testing.assert_allclose(trajectory.poses, np.tile([0.3, 0.2, 0.4], (len(trajectory.times), 1)))
    assert set(trajectory.modes) == {ContactMode.SEPARATING}


def test_push_simulation_is_rate_independent():
    """Quasistatic: the same path at ten times the speed (same distance per step) gives the same poses."""
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    path = [(-0.1, 0.02), (0.1, 0.0), (0.2, 0.05)]
    slow = simulate_push(obj, (0.0, 0.0, 0.0), path, 0.02, 0.05, 0.3, 0.005)
    fast = simulate_push(obj, (0.0, 0.0, 0.0), path, 0.2, 0.005, 0.3, 0.005)
    np.testing.assert_allclose(slow.poses, fast.poses, atol=1e-12)
    np.testing.assert_allclose(slow.times, 10 * fast.times)


def test_push_first_step_follows_the_instantaneous_prediction():
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    contact = np.array([-0.05, 0.02])
    velocity = np.array([1.0, 0.3])
    prediction = predict_push(obj, contact, velocity, 0.3)
    step = 1e-5
    state = push_step(obj, (0.0, 0.0, 0.0), contact, contact + step * velocity, 0.3)
    assert state.mode is prediction.mode
    np.testing.assert_allclose(state.pose / step, prediction.twist, rtol=1e-3, atol=1e-6)


def test_push_a_frictionless_finger_slides_off_a_disk_along_the_analytic_path():
    """A frictionless round finger moving along +x pushes a disk of uniform pressure along the contact normal,
    which passes through the centre: no rotation, and with d = centre - finger = rho (cos phi, sin phi) kept at
    rho = R + r, the centre moves with cos(phi) (cos phi, sin phi) per unit of finger travel and
    d(phi)/ds = sin(phi) / rho. The disk escapes sideways; integrating to phi = -pi/2 (contact lost) it has moved
    rho (-ln|tan(phi0/2)| - cos phi0) along x and -rho (1 + sin phi0) along y."""
    disk_radius, finger_radius, offset = 0.05, 0.01, 0.015
    rho = disk_radius + finger_radius
    angles = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    disk = disk_radius * np.column_stack([np.cos(angles), np.sin(angles)])
    obj = make_pushed_object(disk, 0.5, 1.0)
    trajectory = simulate_push(obj, (0.0, 0.0, 0.0), [(-0.1, offset), (0.3, offset)], 0.05, 0.02, 0.0,
                               finger_radius)
    phi0 = -np.arcsin(offset / rho)
    expected = [rho * (-np.log(abs(np.tan(phi0 / 2))) - np.cos(phi0)), -rho * (1 + np.sin(phi0))]
    np.testing.assert_allclose(trajectory.poses[-1, :2], expected, atol=0.01 * rho)
    assert abs(trajectory.poses[-1, 2]) < 0.01
    assert trajectory.modes[-1] is ContactMode.SEPARATING


@pytest.mark.parametrize("arguments, match", [
    ({"pusher_path": []}, "pusher_path"),
    ({"pusher_path": [(0.0, 0.0)]}, "at least 2 points"),
    ({"pusher_path": [(-0.2, 0.0), (np.nan, 0.0)]}, "finite"),
    ({"pusher_path": [(-0.2, 0.0), (-0.2, 0.0)]}, "zero length"),
    ({"pusher_speed": 0.0}, "pusher_speed"),
    ({"time_step": -0.01}, "time_step"),
    ({"time_step": 1e-9}, "increase time_step"),
    ({"pusher_path": [(0.0, 0.0), (0.2, 0.0)]}, "overlapping"),
    ({"initial_pose": (0.0, np.inf, 0.0)}, "object_pose"),
    ({"contact_friction": -1.0}, "contact_friction"),
])
def test_push_bad_simulation_input_is_rejected(arguments, match):
    obj = make_pushed_object(SQUARE, 0.4, 2.0)
    call = {"initial_pose": (0.0, 0.0, 0.0), "pusher_path": [(-0.2, 0.0), (0.1, 0.0)], "pusher_speed": 0.05,
            "time_step": 0.02, "contact_friction": 0.3, "pusher_radius": 0.01, **arguments}
    with pytest.raises(InputError, match=match):
        simulate_push(obj, **call)
