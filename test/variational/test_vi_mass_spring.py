"""Example 1 (mass-spring): eqs. (10)–(11) against the exact solution, the generic midpoint VI and the article."""

import numpy as np
import pytest

from discrete_robot.variational import mass_spring
from discrete_robot.variational.comparison import mean_variation
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator

PARAMS = mass_spring.MassSpringParams(mass=1.0, stiffness=1.0)
Q0 = np.sqrt(2.0)


class Spring:
    dof = 1
    vectorized = False

    def __init__(self, params):
        self.params = params

    def mass_matrix(self, q):
        return np.array([[self.params.mass]])

    def mass_matrix_derivatives(self, q):
        return np.zeros((1, 1, 1))

    def potential(self, q):
        return 0.5 * self.params.stiffness * q[0] ** 2

    def potential_gradient(self, q):
        return np.array([self.params.stiffness * q[0]])


def test_energy_is_conserved_to_round_off_over_the_article_run():
    """The article's h = 0.035 s, 200 s, E0 = 1 J: mean variation of the order of its 2.7327e-13 J."""
    trajectory = mass_spring.simulate_vi(PARAMS, Q0, 0.0, 0.035, 5714)
    assert trajectory.energy[0] == pytest.approx(1.0, rel=1e-15)
    assert mean_variation(trajectory.energy) < 1e-12
    assert np.max(np.abs(trajectory.energy - 1.0)) < 2e-12


def test_explicit_eqs_10_11_equal_the_generic_midpoint_integrator():
    params = mass_spring.MassSpringParams(mass=2.5, stiffness=7.0)
    explicit = mass_spring.simulate_vi(params, 0.3, -1.2, 0.05, 300)
    generic = MidpointVariationalIntegrator(Spring(params)).simulate([0.3], [-1.2], 0.05, 300)
    np.testing.assert_allclose(explicit.q, generic.q[:, 0], atol=1e-13)
    np.testing.assert_allclose(explicit.qd, generic.qd[:, 0], atol=1e-13)


def test_discrete_solution_is_the_exact_solution_with_the_midpoint_frequency():
    """The map is a rotation by 2 arctan(hω/2) per step: q_k = q0 cos(k φ) exactly, φ → ωh as h → 0."""
    h = 0.035
    trajectory = mass_spring.simulate_vi(PARAMS, Q0, 0.0, h, 5714)
    k = np.arange(5715)
    np.testing.assert_allclose(trajectory.q, Q0 * np.cos(k * 2.0 * np.arctan(0.5 * h)), atol=1e-11)


def test_second_order_convergence_to_the_exact_solution():
    T = 10.0
    errors = []
    for n in (100, 200, 400, 800):
        trajectory = mass_spring.simulate_vi(PARAMS, Q0, 0.3, T / n, n)
        exact_q, exact_qd = mass_spring.exact_solution(PARAMS, Q0, 0.3, trajectory.t)
        errors.append(max(np.max(np.abs(trajectory.q - exact_q)), np.max(np.abs(trajectory.qd - exact_qd))))
    np.testing.assert_allclose(np.log2(np.array(errors[:-1]) / np.array(errors[1:])), 2.0, atol=0.02)


def test_rk45_baseline_leaks_energy_where_the_vi_does_not():
    """Same 200 s: RK45 at its default tolerance changes the energy by orders of magnitude more."""
    rk = mass_spring.simulate_rk45(PARAMS, Q0, 0.0, 200.0, rtol=1e-3)
    vi = mass_spring.simulate_vi(PARAMS, Q0, 0.0, 0.035, 5714)
    assert mean_variation(rk.energy) > 1e6 * mean_variation(vi.energy)
    np.testing.assert_allclose(rk.q, mass_spring.exact_solution(PARAMS, Q0, 0.0, rk.t)[0], atol=0.5)
