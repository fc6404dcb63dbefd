"""The rotation primitives against independent references: transforms3d's conversions and the defining identities."""

import numpy as np
import pytest
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat
from transforms3d.quaternions import axangle2quat, mat2quat, qmult, quat2mat

from discrete_robot.geometry3d import (
    matrix_to_quaternion,
    quaternion_exp,
    quaternion_multiply,
    quaternion_to_matrix,
    right_jacobian_inverse_into,
)


def _rotations():
    rng = np.random.default_rng(0)
    random = [euler2mat(*rng.uniform(-np.pi, np.pi, 3)) for _ in range(50)]
    # each pivot of Shepperd's method: near-identity, and half turns about x, y and z (tiny perturbations)
    pivots = [euler2mat(1e-3, -2e-3, 1e-3)] + [euler2mat(*(np.pi * np.eye(3)[i] + 1e-3)) for i in range(3)]
    return random + pivots + [np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])]


@pytest.mark.parametrize("index", range(len(_rotations())))
def test_matrix_to_quaternion_agrees_with_transforms3d_and_inverts_quaternion_to_matrix(index):
    R = _rotations()[index]
    q = matrix_to_quaternion(R)
    reference = mat2quat(R)
    reference = reference if reference[0] > 0 or (reference[0] == 0 and q @ reference > 0) else -reference
    np.testing.assert_allclose(q, reference, atol=1e-12)
    assert q[0] >= 0.0 and abs(np.linalg.norm(q) - 1.0) < 1e-15
    np.testing.assert_allclose(quaternion_to_matrix(q), R, atol=1e-12)
    np.testing.assert_allclose(quat2mat(q), R, atol=1e-12)


def _rotation_vector(theta):
    angle = np.linalg.norm(theta)
    return np.eye(3) if angle == 0.0 else axangle2mat(theta / angle, angle)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, 1e-3, 0.5, 2.0, 3.0])
def test_right_jacobian_inverse_gives_the_rotation_vector_rate_of_a_body_angular_velocity(angle):
    """θ̇ = J_r(θ)⁻¹ ω is the rate for which exp(θ + θ̇ dt) = exp(θ) exp(ω dt) to first order: the body angular
    velocity of R(θ(t)) (transforms3d's axis-angle matrices, central differences) is ω."""
    rng = np.random.default_rng(int(angle * 1000))
    direction = rng.normal(size=3)
    theta = angle * direction / np.linalg.norm(direction)
    omega = rng.normal(size=3)
    rate = np.empty(3)
    right_jacobian_inverse_into(theta, omega, rate)
    h = 1e-6
    derivative = (_rotation_vector(theta + h * rate) - _rotation_vector(theta - h * rate)) / (2.0 * h)
    body = _rotation_vector(theta).T @ derivative
    np.testing.assert_allclose([body[2, 1], body[0, 2], body[1, 0]], omega, atol=1e-8)
    np.testing.assert_allclose(body + body.T, 0.0, atol=1e-8)


def test_quaternion_exp_and_product_agree_with_transforms3d():
    rng = np.random.default_rng(1)
    for _ in range(20):
        theta, other = rng.normal(size=3), rng.normal(size=3)
        p = quaternion_exp(theta)
        np.testing.assert_allclose(p, axangle2quat(theta, np.linalg.norm(theta)), atol=1e-15)
        q = quaternion_exp(other)
        np.testing.assert_allclose(quaternion_multiply(p, q), qmult(p, q), atol=1e-15)
        np.testing.assert_allclose(quaternion_to_matrix(2.0 * p), quat2mat(p), atol=1e-15)
