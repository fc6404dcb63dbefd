"""The rotation primitives against independent references: transforms3d's conversions and the defining identities."""

import numpy as np
import pytest
from transforms3d.euler import euler2mat
from transforms3d.quaternions import mat2quat, quat2mat

from discrete_robot.geometry3d import matrix_to_quaternion, quaternion_to_matrix


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
