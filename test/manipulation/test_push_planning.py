"""Push planning in the core: three start/goal pairs reached within tolerance, each plan replayed
independently by the push simulator, repositioning that never touches the object, and clear failures."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discrete_robot.errors import InputError
from discrete_robot.manipulation.push_planning import plan_pushes
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import package_config_path
from discrete_robot.pushing.simulation import clearance, simulate_push

RADIUS = 0.01
TOLERANCE = (0.01, np.radians(5.0))


@pytest.fixture(scope="module")
def scene():
    return load_scene(package_config_path("table_scene_arm_6dof.yaml"))


def _table(scene):
    return (scene.table.x[0], scene.table.y[0], scene.table.x[1], scene.table.y[1])


def _plan(scene, goal, **kwargs):
    start = scene.start_pose
    return plan_pushes(scene.obj, start, goal, contact_friction=scene.contact_friction, finger_radius=RADIUS,
                       finger=start[:2] + [-0.1, 0.12], table=_table(scene), **kwargs)


def _replay(scene, plan) -> np.ndarray:
    """Every push simulated again from where the previous one left the object."""
    pose = scene.start_pose
    for push in plan.pushes:
        pose = simulate_push(scene.obj, pose, push.path, 0.05, 0.05, scene.contact_friction, RADIUS).poses[-1]
    return pose


def _wrapped(angle: float) -> float:
    return (angle + np.pi) % (2 * np.pi) - np.pi


@pytest.mark.parametrize("offset", [(0.10, 0.0, 0.0), (0.0, 0.0, np.radians(70.0)), (0.08, 0.10, 0.0)],
                         ids=["translation", "rotation_70deg", "diagonal"])
def test_plans_reach_the_goal_and_replay_to_the_same_pose(scene, offset):
    goal = scene.start_pose + offset
    plan = _plan(scene, goal)
    assert plan.success, plan.message
    replayed = _replay(scene, plan)
    np.testing.assert_allclose(replayed, plan.poses[-1], atol=1e-9)
    assert np.linalg.norm(replayed[:2] - goal[:2]) <= TOLERANCE[0]
    assert abs(_wrapped(replayed[2] - goal[2])) <= TOLERANCE[1]
    # repositioning: the object stands still at the pose the previous push left, and the finger keeps clear
    poses = [scene.start_pose, *[push.predicted_poses[-1] for push in plan.pushes[:-1]]]
    for push, pose in zip(plan.pushes, poses, strict=True):
        for a, b in zip(push.approach[:-1], push.approach[1:], strict=True):
            for point in a + np.linspace(0.0, 1.0, 50)[:, None] * (b - a):
                assert clearance(scene.obj, pose, point, RADIUS) > -1e-6


def test_a_goal_across_the_object_needs_pushes_from_different_sides(scene):
    """Translate along +x and +y: one side cannot do both, so the plan pushes on at least two edges."""
    plan = _plan(scene, scene.start_pose + (0.08, 0.10, 0.0))
    assert plan.success and len(plan.pushes) >= 2
    normals = {tuple(np.round(np.sign(push.contact) * (np.abs(push.contact) > 0.039), 0)) for push in plan.pushes}
    assert len(normals) >= 2, [push.contact for push in plan.pushes]


def test_bad_goals_fail_with_the_reason(scene):
    off = _plan(scene, [2.0, 0.0, 0.0])
    assert not off.success and "outside the table" in off.message
    far = _plan(scene, scene.start_pose + (0.1, 0.0, 0.0), reachable=lambda point: point[0] < 0.5)
    assert not far.success and "unreachable for the arm" in far.message
    with pytest.raises(InputError, match="goal"):
        _plan(scene, [np.nan, 0.0, 0.0])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dx=st.floats(-0.1, 0.1), dy=st.floats(-0.1, 0.1), dtheta=st.floats(-1.0, 1.0))
def test_any_goal_is_reached_or_refused_with_a_reason(scene, dx, dy, dtheta):
    goal = scene.start_pose + (dx, dy, dtheta)
    plan = _plan(scene, goal, max_pushes=3)
    assert np.all(np.isfinite(plan.poses)) and np.all(np.isfinite(plan.finger_path))
    if plan.success:
        assert np.linalg.norm(plan.poses[-1][:2] - goal[:2]) <= TOLERANCE[0]
        assert abs(_wrapped(plan.poses[-1][2] - goal[2])) <= TOLERANCE[1]
    else:
        assert plan.message
