"""Example 2 (planar pendulum, Lie group VI on SO(2)): group structure, the article's energy figure,
the exact elliptic-function solution, and the discrete Euler–Lagrange equations of eq. (20)."""

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.variational import planar_pendulum
from discrete_robot.variational.comparison import mean_variation, orthogonality_errors

PARAMS = planar_pendulum.PlanarPendulumParams()  # m = 1 kg, l = 9.81 m


def test_rotations_stay_in_so2_to_round_off():
    trajectory = planar_pendulum.simulate_vi(PARAMS, np.pi / 2, 0.0, 0.03, 20_000)
    assert np.max(orthogonality_errors(trajectory.rotation)) < 1e-13
    np.testing.assert_allclose(np.linalg.det(trajectory.rotation), 1.0, atol=1e-13)


def test_article_run_reproduces_the_published_mean_energy_variation():
    """θ0 = π/2, Ω0 = 0 (E = 0 J), h = 0.03 s, 1000 s: the article reports a mean variation of 1.0835e-2 J."""
    trajectory = planar_pendulum.simulate_vi(PARAMS, np.pi / 2, 0.0, 0.03, 33_333)
    assert trajectory.energy[0] == pytest.approx(0.0, abs=1e-12)
    assert mean_variation(trajectory.energy) == pytest.approx(1.0835e-2, rel=2e-3)
    first, last = np.abs(trajectory.energy[:5000]).max(), np.abs(trajectory.energy[-5000:]).max()
    assert last < 1.1 * first  # bounded: no drift over 1000 s


def test_second_order_convergence_to_the_exact_elliptic_solution():
    T, theta0 = 5.0, 2.5
    errors = []
    for n in (125, 250, 500, 1000):
        trajectory = planar_pendulum.simulate_vi(PARAMS, theta0, 0.0, T / n, n)
        errors.append(np.max(np.abs(trajectory.theta
                                    - planar_pendulum.exact_angle_from_rest(PARAMS, theta0, trajectory.t))))
    np.testing.assert_allclose(np.log2(np.array(errors[:-1]) / np.array(errors[1:])), 2.0, atol=0.05)


def test_steps_satisfy_the_discrete_euler_lagrange_equation_of_eq_20():
    """L_d(θ_k, θ_k+1) = m l²/h (1 − cos Δθ) + h/2 m g l (cos θ_k + cos θ_k+1), differentiated numerically."""
    m, length, g, h = PARAMS.mass, PARAMS.length, PARAMS.gravity, 0.1

    def discrete_lagrangian(a, b):
        return m * length ** 2 / h * (1.0 - np.cos(b - a)) + 0.5 * h * m * g * length * (np.cos(a) + np.cos(b))

    theta = planar_pendulum.simulate_vi(PARAMS, 2.0, 0.3, h, 40).theta
    eps = 1e-6
    for k in range(1, 40):
        d2 = (discrete_lagrangian(theta[k - 1], theta[k] + eps) - discrete_lagrangian(theta[k - 1], theta[k] - eps))
        d1 = (discrete_lagrangian(theta[k] + eps, theta[k + 1]) - discrete_lagrangian(theta[k] - eps, theta[k + 1]))
        assert abs(d1 + d2) / (2 * eps) < 1e-6 * m * length ** 2


def test_small_angle_motion_matches_the_harmonic_solution():
    theta0, h = 1e-3, 0.03
    trajectory = planar_pendulum.simulate_vi(PARAMS, theta0, 0.0, h, 2000)
    omega = np.sqrt(PARAMS.gravity / PARAMS.length)
    bound = theta0 * ((h * omega) ** 2 * omega * trajectory.t[-1] / 12 + theta0 ** 2 * omega * trajectory.t[-1])
    assert np.max(np.abs(trajectory.theta - theta0 * np.cos(omega * trajectory.t))) < bound


def test_too_large_a_step_is_refused():
    with pytest.raises(InputError, match="too large"):
        planar_pendulum.lgvi_step(np.eye(2), 50.0, 0.1, PARAMS)
