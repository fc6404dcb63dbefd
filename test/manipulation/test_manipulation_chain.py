"""The closed pushing chain in the core: the simulated arm's actual fingertip pushes the object.

Checked against what does not depend on the arm: a push through the centre of a square translates it by the
push depth (symmetry); an off-centre push follows the open-loop prediction of the same finger path
(``simulate_push``) within 1 cm and 5°; the finger never sinks into the object by more than 1 mm; the arm stays
within its torque limits; pushing segments never exceed ``max_push_speed`` (measured on the fingertip by
forward kinematics)."""

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.manipulation.arm import ArmFinger, finger_trajectory
from discrete_robot.manipulation.chain import execute_pushes
from discrete_robot.manipulation.scene import load_scene, scene_from_dict
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.pushing.simulation import simulate_push

PUSH_SPEED = 0.05  # m/s


@pytest.fixture(scope="module")
def planar():
    model = load_model(package_config_path("planar_2link.yaml"))
    scene = load_scene(package_config_path("table_scene_planar_2link.yaml"))
    return ArmFinger.in_scene(model, scene), scene


def _behind(scene, arm, offset_y: float, depth: float) -> tuple[np.ndarray, list[bool]]:
    """Approach the object's -x face at height offset_y from 3 cm away, then push ``depth`` m along +x."""
    x0, y0, _ = scene.start_pose
    face = x0 + scene.obj.footprint[:, 0].min() - arm.radius
    return np.array([[face - 0.03, y0 + offset_y], [face - 0.001, y0 + offset_y],
                     [face + depth, y0 + offset_y]]), [False, True]


def _angle(a: float) -> float:
    return (a + np.pi) % (2 * np.pi) - np.pi


def test_the_shipped_scenes_load_and_bad_scenes_are_refused():
    scene = load_scene(package_config_path("table_scene_arm_6dof.yaml"))
    assert scene.footprint_on_table(scene.start_pose)
    raw = {"table": {"x": [0.0, 1.0], "y": [0.0, 1.0]}, "arm_ready_positions": [0.0, 0.0],
           "object": {"footprint": [0, 0, 0.1, 0, 0.1, 0.1, 0, 0.1], "normal_force": 1.0, "support_friction": 0.5,
                      "contact_friction": 0.3, "start_pose": [2.0, 0.5, 0.0]}}
    with pytest.raises(InputError, match="off the table"):
        scene_from_dict(raw)
    raw["table"]["x"] = [1.0, 0.0]
    with pytest.raises(InputError, match="table.x"):
        scene_from_dict(raw)


def test_pushing_segments_respect_max_push_speed(planar):
    arm, scene = planar
    path, pushing = _behind(scene, arm, 0.0, 0.05)
    trajectory = finger_trajectory(arm, path, pushing, arm.joint_path(path[:1], arm.ready)[0], PUSH_SPEED, 0.3,
                                   sample_time=0.005)
    finger = np.array([arm.position(q) for q in trajectory.q])
    speed = np.linalg.norm(np.diff(finger, axis=0), axis=1) / np.diff(trajectory.t)
    near = finger[1:, 0] > path[1, 0] - 1e-9      # samples on the pushing segment
    assert np.max(speed[near]) <= PUSH_SPEED * 1.001
    assert np.max(speed[~near]) > 2 * PUSH_SPEED    # the approach is fast


def test_a_central_push_translates_the_square_by_the_push_depth(planar):
    arm, scene = planar
    path, pushing = _behind(scene, arm, 0.0, 0.05)
    trajectory = finger_trajectory(arm, path, pushing, arm.joint_path(path[:1], arm.ready)[0], PUSH_SPEED, 0.3)
    executed = execute_pushes(arm, scene, trajectory, scene.start_pose, time_step=0.002)
    np.testing.assert_allclose(executed.poses[-1], scene.start_pose + [0.05, 0.0, 0.0], atol=1e-3)
    assert executed.penetration <= 1e-3
    assert np.all(np.abs(executed.effort) <= arm.model.effort_limits)


def test_an_off_centre_push_follows_the_open_loop_prediction_of_its_finger_path(planar):
    """Pushed 3 cm off its centre line, the square turns; the arm's actual fingertip (tracking errors and all)
    moves it as the prediction of the planned finger path does, within 1 cm and 5°."""
    arm, scene = planar
    path, pushing = _behind(scene, arm, 0.03, 0.08)
    trajectory = finger_trajectory(arm, path, pushing, arm.joint_path(path[:1], arm.ready)[0], PUSH_SPEED, 0.3)
    executed = execute_pushes(arm, scene, trajectory, scene.start_pose, time_step=0.002)
    planned = simulate_push(scene.obj, scene.start_pose, path, PUSH_SPEED, 0.02, scene.contact_friction,
                            arm.radius).poses[-1]
    assert abs(_angle(planned[2] - scene.start_pose[2])) > np.radians(5)   # it does turn
    assert np.linalg.norm(executed.poses[-1][:2] - planned[:2]) < 0.01
    assert abs(_angle(executed.poses[-1][2] - planned[2])) < np.radians(5)
    assert executed.penetration <= 1e-3


def test_the_six_joint_arm_pushes_with_its_fingertip_pointing_down():
    model = load_model(package_config_path("arm_6dof.yaml"))
    scene = load_scene(package_config_path("table_scene_arm_6dof.yaml"))
    arm = ArmFinger.in_scene(model, scene)
    assert arm.height == pytest.approx(scene.table.height + 0.01 + scene.finger_clearance)
    path, pushing = _behind(scene, arm, 0.0, 0.03)
    trajectory = finger_trajectory(arm, path, pushing, arm.joint_path(path[:1], arm.ready)[0], PUSH_SPEED, 0.2)
    executed = execute_pushes(arm, scene, trajectory, scene.start_pose, time_step=0.002, settle=0.2)
    np.testing.assert_allclose(executed.poses[-1], scene.start_pose + [0.03, 0.0, 0.0], atol=2e-3)
    assert executed.penetration <= 1e-3
    assert np.all(np.abs(executed.effort) <= model.effort_limits)


@pytest.mark.parametrize("offset", [(-0.05, 0.03, 1.1), (0.06, 0.08, 0.0)], ids=["rotation_63deg", "two_sides"])
def test_planned_pushes_executed_by_the_arm_reach_the_goal(planar, offset):
    """The whole chain in the core: pushes planned to a goal, the finger motion tracked by the simulated arm,
    the object following its actual fingertip: the goal is reached within 1 cm and 5°, the executed object path
    stays within 1 cm and 5° of the planned one, the finger never sinks 1 mm into the object and the arm never
    needs its full torque."""
    from discrete_robot.manipulation.push_to_pose import path_difference, plan_push_motion, pose_error, push_goal

    arm, scene = planar
    goal = push_goal(scene, scene.start_pose + offset, scene.start_pose)
    motion = plan_push_motion(arm, scene, goal, arm.ready, PUSH_SPEED, 0.2, 0.01, np.radians(5.0))
    executed = execute_pushes(arm, scene, motion.trajectory, scene.start_pose, time_step=0.002)
    position, angle = pose_error(executed.poses[-1], goal.goal)
    assert position <= 0.01 and abs(angle) <= np.radians(5.0)
    path_position, path_angle = path_difference(motion.planned_poses, executed.poses)
    assert path_position <= 0.01 and path_angle <= np.radians(5.0)
    assert executed.penetration <= 1e-3
    assert np.max(np.abs(executed.effort) / arm.model.effort_limits) < 1.0
