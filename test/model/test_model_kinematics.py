"""Forward kinematics and CoM Jacobians against closed forms and finite differences of the kinematics."""

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from discrete_robot.geometry3d import vee
from discrete_robot.model.kinematics import body_jacobians, com_jacobians, forward_kinematics, kinematic_tree


def test_planar_2link_frames_match_the_closed_form(planar_2link):
    q1, q2 = 0.7, -1.9
    frames = forward_kinematics(planar_2link, np.array([q1, q2]))
    np.testing.assert_allclose(frames.positions[1], [np.cos(q1), np.sin(q1), 0.0], atol=1e-15)
    np.testing.assert_allclose(frames.com_positions[0], [0.5 * np.cos(q1), 0.5 * np.sin(q1), 0.0], atol=1e-15)
    np.testing.assert_allclose(frames.com_positions[1], [np.cos(q1) + 0.5 * np.cos(q1 + q2),
                                                         np.sin(q1) + 0.5 * np.sin(q1 + q2), 0.0], atol=1e-15)
    c, s = np.cos(q1 + q2), np.sin(q1 + q2)
    np.testing.assert_allclose(frames.rotations[1], [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]], atol=1e-15)


def _numerical_jacobians(model, q, eps=1e-6, **base):
    """CoM velocity and angular velocity (from Ṙ Rᵀ) per unit q̇_k, by central differences of the kinematics."""
    n = model.dof
    Jv = np.zeros((len(model.links), 3, n))
    Jw = np.zeros((len(model.links), 3, n))
    R = forward_kinematics(model, q, **base).rotations
    for k in range(n):
        dq = np.zeros(n)
        dq[k] = eps
        plus, minus = forward_kinematics(model, q + dq, **base), forward_kinematics(model, q - dq, **base)
        Jv[:, :, k] = (plus.com_positions - minus.com_positions) / (2 * eps)
        Rdot = (plus.rotations - minus.rotations) / (2 * eps)
        Jw[:, :, k] = [vee(Rd @ Ri.T) for Rd, Ri in zip(Rdot, R, strict=True)]
    return Jv, Jw


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof", "mixed_tree"])
def test_com_jacobians_are_derivatives_of_forward_kinematics(request, name):
    model = request.getfixturevalue(name)
    rng = np.random.default_rng(1)
    base = {"base_rotation": euler2mat(0.3, -0.4, 1.2), "base_position": np.array([1.0, -2.0, 0.5])}
    for _ in range(3):
        q = rng.uniform(-2.0, 2.0, model.dof)
        Jv, Jw = com_jacobians(model, q, **base)
        Jv_fd, Jw_fd = _numerical_jacobians(model, q, **base)
        np.testing.assert_allclose(Jv, Jv_fd, atol=1e-8)
        np.testing.assert_allclose(Jw, Jw_fd, atol=1e-8)
        frames = forward_kinematics(model, q, **base)
        Bv, Bw = body_jacobians(model, q, **base)
        np.testing.assert_allclose(frames.rotations @ Bv, Jv, atol=1e-14)
        np.testing.assert_allclose(frames.rotations @ Bw, Jw, atol=1e-14)


def test_base_pose_moves_every_frame_rigidly(mixed_tree):
    q = np.linspace(-1.0, 1.0, mixed_tree.dof)
    R0, p0 = euler2mat(0.3, -0.4, 1.2), np.array([1.0, -2.0, 0.5])
    fixed = forward_kinematics(mixed_tree, q)
    moved = forward_kinematics(mixed_tree, q, base_rotation=R0, base_position=p0)
    np.testing.assert_allclose(moved.rotations, R0 @ fixed.rotations, atol=1e-14)
    np.testing.assert_allclose(moved.com_positions, fixed.com_positions @ R0.T + p0, atol=1e-14)
    np.testing.assert_allclose(moved.transforms()[:, :3, 3], moved.positions)


def test_batches_equal_single_configurations(mixed_tree):
    Q = np.random.default_rng(2).uniform(-2, 2, (4, 3, mixed_tree.dof))
    batch = forward_kinematics(mixed_tree, Q)
    single = forward_kinematics(mixed_tree, Q[2, 1])
    np.testing.assert_array_equal(batch.com_positions[2, 1], single.com_positions)
    np.testing.assert_array_equal(batch.dof_axes[2, 1], single.dof_axes)


def test_root_relative_frames_do_not_depend_on_the_first_coordinate(mixed_tree):
    tree = kinematic_tree(mixed_tree)
    q = np.linspace(-1.0, 1.0, mixed_tree.dof)
    other = q.copy()
    other[0] += 1.234  # first DOF of arm 1
    other[7] -= 0.77   # the only DOF of arm 2
    a = tree.frames(q, relative_to_roots=True)
    b = tree.frames(other, relative_to_roots=True)
    np.testing.assert_array_equal(a.com_positions, b.com_positions)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    np.testing.assert_array_equal(a.dof_axes, b.dof_axes)
