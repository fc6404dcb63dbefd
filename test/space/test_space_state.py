"""The base frame ↔ base CoM conversion of :mod:`discrete_robot.space.state` (what the ROS node reports and
accepts as the base pose), without ROS: against the compiled forward kinematics' own base frame origin and as a
round trip."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.model.description import model_from_dict
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import base_frame_origin, random_state, state_from_base_frame

#: two arms of three mixed joints on a base whose CoM is off its frame origin
ROBOT = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True)))


def test_the_base_has_its_com_off_the_frame_origin():
    assert np.linalg.norm(ROBOT.base_com) > 0.0, "the conversion would be the identity: nothing tested"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_the_base_frame_origin_is_where_the_kinematics_puts_the_base_frame(seed):
    state = random_state(ROBOT, np.random.default_rng(seed))
    np.testing.assert_allclose(base_frame_origin(ROBOT, state), body_poses(ROBOT, state).frame_origins[0],
                               rtol=0.0, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_a_state_built_from_a_base_frame_pose_reports_that_pose_and_its_com_where_the_kinematics_puts_it(seed):
    rng = np.random.default_rng(seed)
    origin, orientation = rng.normal(size=3), rng.normal(size=4)
    positions, rates = rng.uniform(-np.pi, np.pi, ROBOT.dof), rng.normal(size=ROBOT.dof)
    velocity, angular = rng.normal(size=3), rng.normal(size=3)
    state = state_from_base_frame(ROBOT, origin, orientation, positions, velocity, angular, rates)
    np.testing.assert_allclose(base_frame_origin(ROBOT, state), origin, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(state.base_orientation, orientation / np.linalg.norm(orientation), atol=1e-15)
    poses = body_poses(ROBOT, state)
    np.testing.assert_allclose(poses.frame_origins[0], origin, rtol=0.0, atol=1e-12)
    # the CoM at the base frame's r₀ rotated into the world: x₀ − o = R₀ r₀, |x₀ − o| = |r₀|
    np.testing.assert_allclose(np.linalg.norm(state.base_position - origin), np.linalg.norm(ROBOT.base_com),
                               rtol=1e-12)
    np.testing.assert_array_equal(state.joint_rates, rates)
    np.testing.assert_array_equal(state.base_velocity, velocity)
    np.testing.assert_array_equal(state.base_angular_velocity, angular)
