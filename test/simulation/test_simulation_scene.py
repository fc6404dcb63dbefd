"""The table scene in the arm's simulator (discrete_robot.simulation.scene), without ROS.

Coupling: a step that pushes an object on a high-friction table loads the next step by Jᵀ f, with f the
quasistatic force the push core predicts for the same contact and finger move (computed here by
``predict_push``) and J the fingertip's Jacobian by central differences of forward kinematics; the load takes
power from the arm. Determinism: the same push twice, and in other chunkings of the steps, gives the same
joint and object paths to the last bit."""

import numpy as np
import pytest

from discrete_robot.control.computed_torque import tracking_torques
from discrete_robot.control.trajectory import TrajectoryReference
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.manipulation.arm import ArmFinger, finger_trajectory
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.inverse_kinematics import tool_pose
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.simulation.fixed_base import FixedBaseWorld
from discrete_robot.simulation.scene import SceneObject, SceneWorld

HALF = 0.06  # m: half the square's side
#: high friction: the table's (support) and the finger's (contact)
SUPPORT_FRICTION, CONTACT_FRICTION, WEIGHT = 1.0, 0.5, 5.0


@pytest.fixture(scope="module")
def planar():
    model = load_model(package_config_path("planar_2link.yaml"))
    scene = load_scene(package_config_path("table_scene_planar_2link.yaml"))
    return ArmFinger.in_scene(model, scene), scene


def _simulation(model, q, qd):
    return FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3, q, qd, model.lower, model.upper,
                               Dissipation.from_model(model), model.joint_names)


def _jacobian(arm, q, h=1e-6) -> np.ndarray:
    """The fingertip centre's (2, n) world Jacobian by central differences of forward kinematics."""
    columns = []
    for i in range(arm.model.dof):
        dq = np.zeros(arm.model.dof)
        dq[i] = h
        columns.append((tool_pose(arm.model, arm.tool, q + dq)[0][:2]
                        - tool_pose(arm.model, arm.tool, q - dq)[0][:2]) / (2 * h))
    return np.column_stack(columns)


def test_push_loads_the_arm_by_the_transposed_jacobian_of_the_contact_force(planar):
    arm, _ = planar
    square = make_pushed_object([[-HALF, -HALF], [HALF, -HALF], [HALF, HALF], [-HALF, HALF]], SUPPORT_FRICTION,
                                WEIGHT)
    q0 = np.array([-0.5, 1.0])
    finger = tool_pose(arm.model, arm.tool, q0)[0][:2]
    qd0 = np.linalg.solve(_jacobian(arm, q0), [0.05, 0.0])      # the finger moves +x at 5 cm/s
    # the finger touches the square's -x face 2 cm off its centre line: the push turns it
    pose = np.array([finger[0] + arm.radius + HALF, finger[1] - 0.02, 0.0])
    target = q0 + 0.1

    def torques(t, q, qd):
        return 30.0 * (target - q) - 3.0 * qd

    pushed = SceneWorld(arm.model, arm.tool, arm.radius, [SceneObject("square", square, CONTACT_FRICTION, pose)], q0)
    free = SceneWorld(arm.model, arm.tool, arm.radius, [], q0)
    arms = [_simulation(arm.model, q0, qd0) for _ in range(2)]
    for world, simulation in zip((pushed, free), arms, strict=True):
        world.step(simulation, 1, torques)
    assert np.array_equal(arms[0].q, arms[1].q)          # the first step does not feel the contact yet
    q1 = arms[0].q
    finger1 = tool_pose(arm.model, arm.tool, q1)[0][:2]
    # the push core's force at the same contact (-x face, 2 cm up; the square's axes are the world's) for the
    # same finger move; the object's force on the finger is minus the finger's on the object
    contact = [-HALF, finger[1] - pose[1]]
    force = -predict_push(square, contact, finger1 - finger, CONTACT_FRICTION, arm.radius).contact_force
    assert np.linalg.norm(force) > 0.5 * SUPPORT_FRICTION * WEIGHT
    assert pushed.poses["square"][0] > pose[0]            # the square moved
    for world, simulation in zip((pushed, free), arms, strict=True):
        world.step(simulation, 1, torques)
    load = _jacobian(arm, q1).T @ force
    assert np.max(np.abs((arms[0].tau - arms[1].tau) - load)) <= 1e-9
    assert load @ arms[0].qd < 0.0                         # the object takes power from the arm: it resists


def _push(arm, scene, chunks):
    """The planar arm pushes the scene's object 2 cm (2 cm off its centre line), tracking the finger path;
    the joint positions and object poses at the end of every chunk of steps."""
    x0, y0, _ = scene.start_pose
    face = x0 + scene.obj.footprint[:, 0].min() - arm.radius
    path = np.array([[face - 0.005, y0 + 0.02], [face + 0.02, y0 + 0.02]])
    trajectory = finger_trajectory(arm, path, [True], scene.arm_ready_positions, 0.05, 0.2)
    reference = TrajectoryReference(trajectory.t, trajectory.q, trajectory.qd)
    system = RigidBodySystem(arm.model)

    def torques(t, q, qd):
        return tracking_torques(system, q, qd, reference.sample(t), 400.0, 40.0, arm.model.effort_limits)

    simulation = _simulation(arm.model, trajectory.q[0], np.zeros(arm.model.dof))
    world = SceneWorld.from_scene(arm, scene, simulation.q)
    joints, poses = [], []
    for count in chunks:
        world.step(simulation, count, torques)
        joints.append(simulation.q.copy())
        poses.append(world.poses["object"].copy())
    return np.array(joints), np.array(poses)


def test_the_same_push_gives_the_same_bits_in_any_chunking(planar):
    arm, scene = planar
    steps = 700
    joints, poses = _push(arm, scene, [1] * steps)
    assert np.hypot(*(poses[-1, :2] - scene.start_pose[:2])) > 0.005    # it pushed
    assert abs(poses[-1, 2] - scene.start_pose[2]) > 1e-3                # and turned the object
    again = _push(arm, scene, [1] * steps)
    assert np.array_equal(joints, again[0]) and np.array_equal(poses, again[1])
    whole = _push(arm, scene, [steps])
    assert np.array_equal(whole[0][-1], joints[-1]) and np.array_equal(whole[1][-1], poses[-1])
    chunks = [3, 97, 1, 250, 349]
    ends = np.cumsum(chunks) - 1
    chunked = _push(arm, scene, chunks)
    assert np.array_equal(chunked[0], joints[ends]) and np.array_equal(chunked[1], poses[ends])


def test_reset_and_set_state_place_the_objects(planar):
    arm, scene = planar
    world = SceneWorld.from_scene(arm, scene, scene.arm_ready_positions)
    world.force = np.array([1.0, 0.0])
    world.set_state(scene.arm_ready_positions, {"object": [1.2, 0.1, 0.3]})
    assert np.array_equal(world.poses["object"], [1.2, 0.1, 0.3]) and not world.force.any()
    world.set_state(scene.arm_ready_positions, {})
    assert np.array_equal(world.poses["object"], [1.2, 0.1, 0.3])
    world.reset(scene.arm_ready_positions)
    assert np.array_equal(world.poses["object"], scene.start_pose)
    with pytest.raises(InputError, match="no object named"):
        world.set_state(scene.arm_ready_positions, {"cup": [1.0, 0.0, 0.0]})
    with pytest.raises(InputError, match="pose of object 'object'"):
        world.set_state(scene.arm_ready_positions, {"object": [1.0, np.nan, 0.0]})


def test_the_fixed_base_world_steps_resets_and_sets_the_objects(planar):
    arm, scene = planar
    q0 = arm.joint_path([[scene.start_pose[0] - 0.061 - arm.radius, 0.02]], scene.arm_ready_positions)[0]
    qd0 = np.linalg.solve(_jacobian(arm, q0), [0.05, 0.0])
    world = FixedBaseWorld(arm.model, "discrete", 1e-3, q0, qd0, SceneWorld.from_scene(arm, scene, q0))
    free = FixedBaseWorld(arm.model, "discrete", 1e-3, q0, qd0)
    for each in (world, free):
        each.step(40, np.zeros(arm.model.dof))          # the finger touches after 20 steps
    moved = world.scene.poses["object"].copy()
    assert moved[0] > scene.start_pose[0]                                  # the finger reached and pushed it
    assert not np.array_equal(world.simulation.q, free.simulation.q)        # and the arm felt it
    world.set_state(q0, qd0, {"object": [1.3, 0.0, 0.5]})
    assert np.array_equal(world.scene.poses["object"], [1.3, 0.0, 0.5]) and not world.scene.force.any()
    with pytest.raises(InputError, match="no object named"):
        world.set_state(q0 + 0.1, qd0, {"cup": [1.0, 0.0, 0.0]})
    assert np.array_equal(world.simulation.q, q0)                          # a refused state changes nothing
    with pytest.raises(InputError, match="no scene"):
        free.set_state(q0, qd0, {"object": [1.3, 0.0, 0.5]})
    world.reset()
    assert np.array_equal(world.scene.poses["object"], scene.start_pose)
    assert np.array_equal(world.simulation.q, q0)
