"""Example 3 (spherical pendulum on S²): the article's figures, the invariants the map keeps to round-off,
convergence to the continuous equations (with and without a control moment), and the planar special case,
which must coincide with the SO(2) Lie group integrator (the two discrete Lagrangians are the same)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from discrete_robot.errors import InputError
from discrete_robot.variational import planar_pendulum, spherical_pendulum
from discrete_robot.variational.comparison import mean_variation

PARAMS = spherical_pendulum.SphericalPendulumParams()  # m = 1 kg, l = 9.81 m
E3 = np.array([0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def article_run():
    q0, omega0 = spherical_pendulum.article_initial_state()
    return spherical_pendulum.simulate_vi(PARAMS, q0, omega0, 0.05, 4000)


def test_article_initial_state_is_tangent_with_the_published_energy(article_run):
    q0, omega0 = spherical_pendulum.article_initial_state()
    assert np.linalg.norm(q0) == pytest.approx(1.0, abs=1e-15)
    assert q0 @ omega0 == pytest.approx(0.0, abs=1e-15)
    assert article_run.energy[0] == pytest.approx(-0.44, abs=1e-14)


def test_article_run_reproduces_the_published_figures(article_run):
    """h = 0.05 s, 200 s: mean energy deviation 1.5460e-4, mean unit-length error 3.2476e-15 (article)."""
    assert mean_variation(article_run.energy) == pytest.approx(1.5460e-4, rel=2e-3)
    assert article_run.unit_length_error.mean() < 1e-14


def test_unit_length_tangency_and_vertical_angular_momentum_are_kept_to_round_off(article_run):
    assert np.max(article_run.unit_length_error) < 1e-14
    assert np.max(np.abs(np.sum(article_run.q * article_run.omega, axis=1))) < 1e-14
    assert np.ptp(article_run.omega[:, 2]) < 1e-15  # ω·e3: gravity has no moment about the vertical


def test_energy_stays_bounded(article_run):
    error = np.abs(article_run.energy - article_run.energy[0])
    assert error.max() < 1e-3
    assert error[-1000:].max() < 1.2 * error[:1000].max()


def _reference(q0, omega0, T, u=None):
    g_over_l = PARAMS.gravity / PARAMS.length
    u = np.zeros(3) if u is None else u

    def f(_t, y):  # ω̇ = g/l q × e3 + u⊥/(m l²), q̇ = ω × q
        q, omega = y[:3], y[3:]
        return np.concatenate([np.cross(omega, q), g_over_l * np.cross(q, E3) + (u - (u @ q) * q) / PARAMS.inertia])

    return solve_ivp(f, (0.0, T), np.concatenate([q0, omega0]), method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]


@pytest.mark.parametrize("u", [None, np.array([0.3, -0.5, 0.2]) * PARAMS.inertia], ids=["free", "controlled"])
def test_second_order_convergence_to_the_continuous_equations(u):
    q0, omega0 = spherical_pendulum.article_initial_state()
    T = 4.0
    reference = _reference(q0, omega0, T, u)
    errors = []
    for n in (40, 80, 160, 320):
        controls = None if u is None else np.tile(u, (n + 1, 1))
        trajectory = spherical_pendulum.simulate_vi(PARAMS, q0, omega0, T / n, n, controls)
        errors.append(np.linalg.norm(np.concatenate([trajectory.q[-1], trajectory.omega[-1]]) - reference))
    np.testing.assert_allclose(np.log2(np.array(errors[:-1]) / np.array(errors[1:])), 2.0, atol=0.1)


def test_controlled_step_balances_vertical_angular_momentum_exactly():
    """Discrete momentum balance: ω·e3 changes by exactly h/(2 m l²) (u_k⊥ + u_k+1⊥)·e3, and |q| stays 1."""
    rng = np.random.default_rng(7)
    q, omega = spherical_pendulum.article_initial_state()
    h = 0.05
    for _ in range(200):
        u = rng.normal(size=(2, 3))
        q1, omega1 = spherical_pendulum.lgvi_step(q, omega, h, PARAMS, u)
        impulse = 0.5 * h / PARAMS.inertia * ((u[0] - (u[0] @ q) * q) + (u[1] - (u[1] @ q1) * q1))
        assert omega1[2] - omega[2] == pytest.approx(impulse[2], abs=1e-15)
        assert abs(np.linalg.norm(q1) - 1.0) < 1e-14 and abs(q1 @ omega1) < 1e-14
        q, omega = q1, omega1


def test_a_moment_along_the_rod_has_no_effect():
    q, omega = spherical_pendulum.article_initial_state()
    free = spherical_pendulum.lgvi_step(q, omega, 0.05, PARAMS)
    along = spherical_pendulum.lgvi_step(q, omega, 0.05, PARAMS, np.array([3.0 * q, np.zeros(3)]))
    np.testing.assert_allclose(along[0], free[0], atol=1e-15)
    np.testing.assert_allclose(along[1], free[1], atol=1e-15)


def test_motion_in_a_vertical_plane_equals_the_so2_integrator():
    """|q_k+1 − q_k|² = 2(1 − cos Δθ): eq. (34) restricted to the x–z plane is eq. (20); q = (−sin θ, 0, cos θ)."""
    theta0, omega0, h = 2.2, 0.4, 0.05
    planar = planar_pendulum.simulate_vi(planar_pendulum.PlanarPendulumParams(), theta0, omega0, h, 2000)
    spherical = spherical_pendulum.simulate_vi(PARAMS, [-np.sin(theta0), 0.0, np.cos(theta0)], [0.0, -omega0, 0.0],
                                               h, 2000)
    np.testing.assert_allclose(spherical.q[:, 0], -np.sin(planar.theta), atol=1e-11)
    np.testing.assert_allclose(spherical.q[:, 2], np.cos(planar.theta), atol=1e-11)
    np.testing.assert_allclose(spherical.omega[:, 1], -planar.omega, atol=1e-11)
    assert np.max(np.abs(spherical.q[:, 1])) == 0.0


def test_bad_inputs_are_refused():
    q, omega = spherical_pendulum.article_initial_state()
    with pytest.raises(InputError, match="control"):
        spherical_pendulum.lgvi_step(q, omega, 0.05, PARAMS, np.zeros(4))
    with pytest.raises(InputError, match="unit vector"):
        spherical_pendulum.simulate_vi(PARAMS, 2 * q, omega, 0.05, 10)
    with pytest.raises(InputError, match="too large"):
        spherical_pendulum.lgvi_step(q, 100 * omega, 0.05, PARAMS)
