"""Push-to-pose requests: any goal, start or object override is either a valid request (finite, the scene's
values where the request gives none) or refused naming the field; the pose error and path difference against
hand-computed values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.errors import InputError
from discrete_robot.manipulation.push_to_pose import path_difference, pose_error, push_goal
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import package_config_path

SCENE = load_scene(package_config_path("table_scene_arm_6dof.yaml"))
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -1.0, 1e308, 5e-324]))
POSES = st.lists(NUMBERS, min_size=0, max_size=4)
FOOTPRINTS = st.one_of(st.just([]), st.lists(st.tuples(NUMBERS, NUMBERS), min_size=0, max_size=6),
                       st.just([(0.05, 0.05), (0.05, -0.05), (-0.05, -0.05), (-0.05, 0.05)]),   # clockwise
                       st.just([(0.0, 0.0), (0.1, 0.0), (0.2, 0.0)]))                          # degenerate


@settings(max_examples=300, deadline=None)
@given(goal=POSES, start=POSES, footprint=FOOTPRINTS, force=NUMBERS, support=NUMBERS, contact=NUMBERS)
def test_any_request_is_valid_or_refused_naming_the_field(goal, start, footprint, force, support, contact):
    try:
        request = push_goal(SCENE, goal, start, footprint, force, support, contact)
    except InputError as error:
        assert any(field in str(error) for field in ("goal", "start", "footprint", "normal_force", "support_friction",
                                                     "contact_friction")), str(error)
        return
    for value in (request.goal, request.start, request.obj.footprint, request.obj.normal_force,
                  request.obj.support_friction, request.contact_friction):
        assert np.all(np.isfinite(value))
    assert request.contact_friction >= 0.0


def test_defaults_are_the_scenes_object():
    request = push_goal(SCENE, [0.5, 0.0, 0.0], SCENE.start_pose)
    assert request.obj is SCENE.obj and request.contact_friction == SCENE.contact_friction
    frictionless = push_goal(SCENE, [0.5, 0.0, 0.0], SCENE.start_pose, contact_friction=0.0)
    assert frictionless.contact_friction == 0.0


def test_pose_error_wraps_the_angle_and_path_difference_takes_the_nearest_planned_pose():
    assert pose_error([1.0, 1.0, np.pi - 0.1], [1.0, 0.0, -np.pi + 0.1]) == pytest.approx((1.0, -0.2))
    planned = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.2]])
    executed = np.array([[0.0, 0.003, 0.01], [0.1, -0.004, 0.25]])
    assert path_difference(planned, executed) == pytest.approx((0.004, 0.05))
