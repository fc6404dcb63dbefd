"""The paper's recursive equations against the Newton–Euler formulation, inverse dynamics, momentum laws."""

from dataclasses import replace

import numpy as np
import pytest

from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.space import dense_lagrangian, newton_euler, recursive
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.loads import ExternalLoad, LoadFrame, resolve_loads
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.state import random_state

TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def dual_arm() -> SpaceRobot:
    return SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))


@pytest.fixture(scope="module")
def mixed_4x5() -> SpaceRobot:
    """4 arms x 5 links, revolute / universal / spherical joints in turn, random geometry."""
    return SpaceRobot.from_model(model_from_dict(multi_arm_model_data(4, 5, mixed_joints=True, seed=11)))


@pytest.fixture(scope="module")
def sliding() -> SpaceRobot:
    """3 arms x 4 links, revolute / prismatic / universal / spherical joints in turn: links hang below sliders."""
    return SpaceRobot.from_model(model_from_dict(multi_arm_model_data(3, 4, mixed_joints=True, seed=13,
                                                                      prismatic=True)))


def random_loads(robot: SpaceRobot, rng: np.random.Generator, count: int = 4) -> list[ExternalLoad]:
    """Forces at random points (some at the CoM) and free moments on random bodies, body or world frame."""
    loads = []
    for k in range(count):
        body = robot.body_names[rng.integers(robot.body_count)]
        loads.append(ExternalLoad(body=body, force=rng.normal(size=3) * 5.0,
                                  point=None if k == 0 else rng.normal(size=3),
                                  moment=rng.normal(size=3) * 2.0,
                                  frame=LoadFrame.BODY if k % 2 else LoadFrame.WORLD))
    return loads


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_mixed_robot_has_every_joint_kind(mixed_4x5, sliding):
    assert {link.kind for link in mixed_4x5.links} == set(JointKind) - {JointKind.PRISMATIC}
    assert len(mixed_4x5.arms) == 4 and all(len(arm) == 5 for arm in mixed_4x5.arms)
    assert {link.kind for link in sliding.links} == set(JointKind)
    slider = next(b for b, link in enumerate(sliding.links, start=1) if link.kind is JointKind.PRISMATIC)
    assert any(link.parent == slider for link in sliding.links)     # the sliding joint carries links


@pytest.mark.parametrize("robot_name", ["dual_arm", "mixed_4x5", "sliding"])
def test_recursive_and_newton_euler_formulations_agree(robot_name, request):
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(2024)
    for _ in range(5):
        state = random_state(robot, rng, speed=1.5)
        loads = random_loads(robot, rng)
        torques = rng.normal(size=robot.dof) * 10.0
        ours = recursive.equation_terms(robot, state, loads, torques)
        theirs = newton_euler.equation_terms(robot, state, loads, torques)
        assert relative_error(ours.mass_matrix, theirs.mass_matrix) <= TOLERANCE
        assert relative_error(ours.bias, theirs.bias) <= TOLERANCE
        assert relative_error(ours.generalized_forces, theirs.generalized_forces) <= TOLERANCE
        accelerations = recursive.forward_dynamics(robot, state, loads, torques)
        assert relative_error(accelerations, newton_euler.forward_dynamics(robot, state, loads, torques)) <= TOLERANCE


@pytest.mark.parametrize("robot_name", ["dual_arm", "mixed_4x5", "sliding"])
def test_inverse_dynamics_recovers_the_joint_torques_and_a_zero_base_wrench(robot_name, request):
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(7)
    state = random_state(robot, rng)
    loads = random_loads(robot, rng)
    torques = rng.normal(size=robot.dof) * 10.0
    accelerations = recursive.forward_dynamics(robot, state, loads, torques)
    required = recursive.inverse_dynamics(robot, state, accelerations, loads)
    scale = np.max(np.abs(torques))
    np.testing.assert_allclose(required[6:], torques, atol=1e-10 * scale)
    np.testing.assert_allclose(required[:6], 0.0, atol=1e-10 * scale)


def test_mass_matrix_is_symmetric_positive_definite_and_arms_couple_only_through_the_base(mixed_4x5):
    M = recursive.equation_terms(mixed_4x5, random_state(mixed_4x5, np.random.default_rng(3))).mass_matrix
    np.testing.assert_allclose(M, M.T, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0.0
    blocks = recursive.arm_dof_indices(mixed_4x5)
    for i, first in enumerate(blocks):
        for second in blocks[i + 1:]:
            assert np.all(M[np.ix_(first, second)] == 0.0)                  # eq. (39)


def _cartesian_derivative(robot, state, loads, torques):
    """Time derivative of (base CoM, base quaternion, joint quaternions, angles, u) with Ṙ = R[ω]."""
    accelerations = recursive.forward_dynamics(robot, state, loads, torques)

    def quaternion_rate(q, omega):
        w, x, y, z = q
        return 0.5 * np.array([-x * omega[0] - y * omega[1] - z * omega[2], w * omega[0] + y * omega[2] - z * omega[1],
                               w * omega[1] + z * omega[0] - x * omega[2], w * omega[2] + x * omega[1] - y * omega[0]])

    joint_quaternion_rates = np.array([
        quaternion_rate(state.joint_orientations[link.quaternion_index], state.joint_rates[link.rates])
        for link in robot.links if link.kind is JointKind.SPHERICAL]).reshape(-1, 4)
    angle_rates = np.concatenate([state.joint_rates[link.rates] for link in robot.links
                                  if link.kind is not JointKind.SPHERICAL] or [np.zeros(0)])
    return (state.base_rotation() @ state.base_velocity,
            quaternion_rate(state.base_orientation, state.base_angular_velocity),
            joint_quaternion_rates, angle_rates, accelerations)


def _advance(robot, state, h, loads, torques):
    """One classical RK4 step of the Cartesian equations (quaternions as plain vectors)."""

    def moved(base, rates, factor):
        position, orientation, joint_orientations, angles, u = (factor * r for r in rates)
        return replace(base, base_position=base.base_position + position,
                       base_orientation=base.base_orientation + orientation,
                       joint_orientations=base.joint_orientations + joint_orientations,
                       joint_angles=base.joint_angles + angles, base_velocity=base.base_velocity + u[:3],
                       base_angular_velocity=base.base_angular_velocity + u[3:6], joint_rates=base.joint_rates + u[6:])

    k1 = _cartesian_derivative(robot, state, loads, torques)
    k2 = _cartesian_derivative(robot, moved(state, k1, h / 2), loads, torques)
    k3 = _cartesian_derivative(robot, moved(state, k2, h / 2), loads, torques)
    k4 = _cartesian_derivative(robot, moved(state, k3, h), loads, torques)
    combined = [(a + 2 * b + 2 * c + d) / 6 for a, b, c, d in zip(k1, k2, k3, k4, strict=True)]
    return moved(state, combined, h)


@pytest.mark.parametrize("robot_name", ["mixed_4x5", "sliding"])
def test_momentum_rates_equal_the_applied_loads(robot_name, request):
    """Eqs. (19)–(20): dP/dt = Σ F and dL_c/dt = Σ (x − c) × F + M; joint torques change neither.

    Central differences of the momenta over ±h steps of the plain Cartesian equations of motion.
    """
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(9)
    state = random_state(robot, rng)
    loads = random_loads(robot, rng)
    torques = rng.normal(size=robot.dof) * 10.0
    h = 1e-4
    after = recursive.momentum_report(robot, _advance(robot, state, h, loads, torques))
    before = recursive.momentum_report(robot, _advance(robot, state, -h, loads, torques))
    now = recursive.momentum_report(robot, state)
    world = resolve_loads(robot, body_poses(robot, state), loads)
    linear_rate = (after.linear - before.linear) / (2 * h)
    angular_rate = (after.angular - before.angular) / (2 * h)
    np.testing.assert_allclose(linear_rate, world.total_force(), rtol=0, atol=1e-6 * np.abs(world.total_force()).max())
    expected = world.moment_about(now.center_of_mass)
    np.testing.assert_allclose(angular_rate, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_dense_lagrangian_baseline_agrees_with_the_recursive_algorithm(dual_arm, sliding):
    """The benchmark's classical baseline is only a fair baseline if it computes the same motion."""
    rng = np.random.default_rng(12)
    robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True, seed=5)))
    for model in (dual_arm, robot, sliding):
        state = random_state(model, rng)
        loads = random_loads(model, rng, count=2)
        torques = rng.normal(size=model.dof)
        expected = recursive.forward_dynamics(model, state, loads, torques)
        # finite-difference Christoffel terms: truncation ~h² with h = 1e-5
        assert relative_error(dense_lagrangian.forward_dynamics(model, state, loads, torques), expected) <= 1e-6
