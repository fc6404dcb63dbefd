"""Discrete controlled Lagrangian of the cart–pendulum (h = 0.05 s, m = 0.14 kg, M = 0.44 kg, l = 0.215 m).

The closed loop is simulated as the physical system (unactuated φ equation plus the control law); the
controlled-Lagrangian flow (58)–(59) is simulated separately by the generic midpoint integrator on the
shaped metric. The discrete matching conditions say the two give the same φ motion, and that is checked."""

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.variational import cart_pendulum
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator

PARAMS = cart_pendulum.CartPendulumParams()
H = cart_pendulum.ARTICLE_TIME_STEP
KAPPA = 2.0 * PARAMS.critical_kappa  # the article's "twice the critical value"


def test_critical_gain_is_where_the_reduced_pendulum_inertia_changes_sign():
    """α − β(0)²/γ − κ β(0)² = 0 at κ_crit = M/(m(m+M))."""
    assert PARAMS.critical_kappa == pytest.approx(PARAMS.cart_mass / (PARAMS.pendulum_mass * PARAMS.gamma))
    assert PARAMS.alpha - PARAMS.ml ** 2 / PARAMS.gamma - PARAMS.critical_kappa * PARAMS.ml ** 2 == pytest.approx(
        0.0, abs=1e-18)


def test_without_control_the_inverted_pendulum_falls():
    q0, qd0 = cart_pendulum.default_initial_state()
    trajectory = cart_pendulum.simulate_uncontrolled(PARAMS, q0, qd0, H, 40)
    assert np.max(np.abs(trajectory.q[:, 0])) > np.pi / 2


def test_kinetic_shaping_keeps_the_pendulum_up_with_sustained_oscillations():
    """The article's Fig. 7: φ stays within its initial amplitude for 20 s, the oscillation does not die out,
    the controlled momentum is conserved to round-off and the cart drifts."""
    q0, qd0 = cart_pendulum.default_initial_state()
    trajectory = cart_pendulum.KineticShapingController(PARAMS, KAPPA).simulate(q0, qd0, H, 400)
    phi = trajectory.q[:, 0]
    assert np.max(np.abs(phi)) <= abs(q0[0]) * 1.01
    assert np.max(np.abs(phi[-20:])) > 0.9 * abs(q0[0])
    assert np.ptp(trajectory.controlled_momentum) < 1e-13
    assert trajectory.q[-1, 1] - trajectory.q[0, 1] > 1.0


def test_gain_below_critical_does_not_stabilise():
    q0, qd0 = cart_pendulum.default_initial_state()
    trajectory = cart_pendulum.KineticShapingController(PARAMS, 0.5 * PARAMS.critical_kappa).simulate(q0, qd0, H, 10)
    assert np.max(np.abs(trajectory.q[:, 0])) > 0.5


def test_with_dissipation_the_angle_goes_to_zero():
    q0, qd0 = cart_pendulum.default_initial_state()
    trajectory = cart_pendulum.KineticShapingController(PARAMS, KAPPA, dissipation=1.0).simulate(q0, qd0, H, 400)
    assert np.max(np.abs(trajectory.q[-20:, 0])) < 1e-6 * abs(q0[0])
    assert np.max(np.abs(trajectory.force[-20:])) < 1e-6


def test_closed_loop_on_the_zero_momentum_level_is_the_controlled_lagrangian_flow():
    """From rest the controlled momentum is 0 on both sides: (56)–(57) and (58)–(59) give the same q_k."""
    controller = cart_pendulum.KineticShapingController(PARAMS, KAPPA)
    q0 = np.array([0.15, 0.0])
    closed_loop = controller.simulate(q0, [0.0, 0.0], H, 200)
    controlled = MidpointVariationalIntegrator(controller.controlled).simulate(q0, [0.0, 0.0], H, 200)
    np.testing.assert_allclose(closed_loop.q, controlled.q, atol=1e-12)


def test_discrete_matching_on_a_nonzero_momentum_level():
    """Closed loop on level p equals the controlled-Lagrangian flow on level p/(1 + γκ) in φ (article)."""
    controller = cart_pendulum.KineticShapingController(PARAMS, KAPPA)
    q0, qd0 = cart_pendulum.default_initial_state()
    closed_loop = controller.simulate(q0, qd0, H, 200)
    level = closed_loop.controlled_momentum[0] / controller.controlled.coupling

    def controlled_flow_phi(momentum_level):
        """φ_k of the controlled-Lagrangian flow from the closed loop's φ0, φ1 with s1 on ``momentum_level``."""
        phi0, phi1 = closed_loop.q[0, 0], closed_loop.q[1, 0]
        b_c = controller.controlled.mass_matrix(np.array([0.5 * (phi0 + phi1), 0.0]))[1, 0]
        q_prev, q = q0, np.array([phi1, q0[1] + (H * momentum_level - b_c * (phi1 - phi0)) / PARAMS.gamma])
        vi = MidpointVariationalIntegrator(controller.controlled)
        p, phis = vi.d2_lagrangian(q_prev, q, H), [phi0, phi1]
        for _ in range(199):
            q, p = vi.step(q, p, H)
            phis.append(q[0])
        return np.array(phis)

    np.testing.assert_allclose(controlled_flow_phi(level), closed_loop.q[:, 0], atol=1e-11)
    # On the closed loop's own level the φ motion differs: the level really has to be rescaled.
    assert np.max(np.abs(controlled_flow_phi(closed_loop.controlled_momentum[0]) - closed_loop.q[:, 0])) > 1e-5


def test_cart_force_is_the_change_of_the_physical_discrete_momentum():
    """Physical s equation (57): D2 L_d(q_k−1, q_k)_s + D1 L_d(q_k, q_k+1)_s + h u_k = 0."""
    controller = cart_pendulum.KineticShapingController(PARAMS, KAPPA, dissipation=0.5)
    q0, qd0 = cart_pendulum.default_initial_state()
    trajectory = controller.simulate(q0, qd0, H, 50)
    physical = MidpointVariationalIntegrator(cart_pendulum.CartPendulum(PARAMS))
    q = trajectory.q
    for k in range(1, 50):
        balance = (physical.d2_lagrangian(q[k - 1], q[k], H)[1] + physical.d1_lagrangian(q[k], q[k + 1], H)[1]
                   + H * trajectory.force[k])
        assert balance == pytest.approx(0.0, abs=1e-13)
        phi_balance = physical.d2_lagrangian(q[k - 1], q[k], H)[0] + physical.d1_lagrangian(q[k], q[k + 1], H)[0]
        assert phi_balance == pytest.approx(0.0, abs=1e-13)  # the pendulum itself is never pushed


def test_bad_parameters_are_refused():
    with pytest.raises(InputError):
        cart_pendulum.CartPendulumParams(cart_mass=-1.0)
    with pytest.raises(InputError):
        cart_pendulum.KineticShapingController(PARAMS, -1.0)
    with pytest.raises(InputError):
        cart_pendulum.KineticShapingController(PARAMS, KAPPA).simulate([np.nan, 0.0], [0.0, 0.0], H, 3)
