"""Example 4 (dumbbell in a central field, LGVI on SE(3)): SO(3) kept to round-off, the total angular
momentum (the momentum map of the rotational symmetry) conserved, energy bounded, eq. (42) solved,
the moment of eq. (41) checked by finite differences, and second-order convergence to the continuous flow."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from transforms3d.quaternions import axangle2quat, quat2mat

from discrete_robot.geometry3d import hat, quaternion_to_matrix_unnormalised, so3_exp
from discrete_robot.variational import dumbbell
from discrete_robot.variational.comparison import orthogonality_errors

PARAMS = dumbbell.DumbbellParams()
INITIAL = dumbbell.default_initial_state(PARAMS)


@pytest.fixture(scope="module")
def long_run():
    return dumbbell.simulate_vi(PARAMS, INITIAL, 0.5, 2000)  # 20 orbits


def test_rotations_stay_orthogonal_to_round_off(long_run):
    assert np.max(orthogonality_errors(long_run.rotation)) < 1e-13
    np.testing.assert_allclose(np.linalg.det(long_run.rotation), 1.0, atol=1e-13)


def test_total_angular_momentum_is_conserved_to_round_off(long_run):
    change = long_run.angular_momentum - long_run.angular_momentum[0]
    assert np.max(np.abs(change)) < 1e-13 * np.linalg.norm(long_run.angular_momentum[0])


def test_energy_error_is_bounded_without_drift(long_run):
    error = long_run.energy - long_run.energy[0]
    assert np.max(np.abs(error)) < 1e-3 * abs(long_run.energy[0])
    assert np.abs(error[-500:]).max() < 1.5 * np.abs(error[:500]).max()


def test_relative_rotation_solves_eq_42():
    rng = np.random.default_rng(3)
    for _ in range(20):
        points, masses = rng.normal(size=(5, 3)), rng.uniform(0.1, 2.0, size=5)  # a physical inertia: J_d ≥ 0
        J = sum(m * (r @ r * np.eye(3) - np.outer(r, r)) for m, r in zip(masses, points, strict=True))
        g = 2.0 * J @ (0.1 * rng.normal(size=3))  # a step turning the body by about 0.3 rad
        F = dumbbell.solve_relative_rotation(g, J, np.linalg.inv(J))
        Jd = 0.5 * np.trace(J) * np.eye(3) - J
        np.testing.assert_allclose(F @ Jd - Jd @ F.T, hat(g), atol=1e-13 * np.abs(g).max())
        np.testing.assert_allclose(F.T @ F, np.eye(3), atol=1e-15)


def test_moment_and_force_are_the_derivatives_of_the_potential():
    """M·ξ = −d/dε U(R exp(εξ̂), x) (eq. (41)) and ∂U/∂x against central differences."""
    R, x, eps = INITIAL.rotation, INITIAL.position, 1e-6
    load = dumbbell.loads(PARAMS, R, x)
    for xi in np.eye(3):
        dU = (dumbbell.loads(PARAMS, R @ so3_exp(eps * xi), x).potential
              - dumbbell.loads(PARAMS, R @ so3_exp(-eps * xi), x).potential) / (2 * eps)
        assert load.moment @ xi == pytest.approx(-dU, abs=1e-9)
        dUx = (dumbbell.loads(PARAMS, R, x + eps * xi).potential
               - dumbbell.loads(PARAMS, R, x - eps * xi).potential) / (2 * eps)
        assert load.gradient @ xi == pytest.approx(dUx, abs=1e-9)


def test_second_order_convergence_to_the_continuous_equations():
    T = 10.0
    y0 = np.concatenate([INITIAL.rotation.ravel(), INITIAL.position, INITIAL.omega, INITIAL.velocity])
    reference = solve_ivp(dumbbell.continuous_dynamics(PARAMS), (0.0, T), y0, method="DOP853", rtol=1e-12,
                          atol=1e-12).y[:, -1]
    errors = []
    for n in (20, 40, 80, 160):
        trajectory = dumbbell.simulate_vi(PARAMS, INITIAL, T / n, n)
        errors.append(max(np.linalg.norm(trajectory.rotation[-1] - reference[:9].reshape(3, 3)),
                          np.linalg.norm(trajectory.position[-1] - reference[9:12]),
                          np.linalg.norm(trajectory.omega[-1] - reference[12:15])))
    np.testing.assert_allclose(np.log2(np.array(errors[:-1]) / np.array(errors[1:])), 2.0, atol=0.1)


def test_unnormalised_quaternion_formula_is_the_rotation_for_unit_quaternions_and_scales_otherwise():
    q = axangle2quat([1.0, 2.0, -0.5], 0.9)
    np.testing.assert_allclose(quaternion_to_matrix_unnormalised(q), quat2mat(q), atol=1e-15)
    R = quaternion_to_matrix_unnormalised(1.01 * q)
    np.testing.assert_allclose(R.T @ R, 1.01 ** 4 * np.eye(3), atol=1e-14)


def test_near_circular_orbit():
    trajectory = dumbbell.simulate_vi(PARAMS, INITIAL, 0.5, 500)
    radius = np.linalg.norm(trajectory.position, axis=1)
    assert np.ptp(radius) < 0.1 * radius[0]
