"""The midpoint variational integrator on hand-written systems with closed-form M(q) and V(q).

References independent of the integrator: finite differences of the discrete Lagrangian, the continuous
Euler–Lagrange equations solved by scipy at tight tolerance, the closed-form discrete solution of the
midpoint rule for a harmonic oscillator, and the conservation laws the discrete Noether theorem promises.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator

G = 9.81


class Pendulum:
    """Planar pendulum, θ from the downward vertical: M = m l², V = −m g l cos θ."""

    dof = 1
    vectorized = False

    def __init__(self, mass=1.5, length=0.8):
        self.m, self.l = mass, length

    def mass_matrix(self, q):
        return np.array([[self.m * self.l ** 2]])

    def mass_matrix_derivatives(self, q):
        return np.zeros((1, 1, 1))

    def potential(self, q):
        return -self.m * G * self.l * np.cos(q[0])

    def potential_gradient(self, q):
        return np.array([self.m * G * self.l * np.sin(q[0])])


class PolarParticle:
    """A particle in the plane on a radial spring, q = (r, θ): M = diag(m, m r²), V = ½ k (r − r0)²; θ is cyclic."""

    dof = 2
    vectorized = False
    m, k, r0 = 2.0, 30.0, 1.0

    def mass_matrix(self, q):
        return np.diag([self.m, self.m * q[0] ** 2])

    def mass_matrix_derivatives(self, q):
        d = np.zeros((2, 2, 2))
        d[0, 1, 1] = 2.0 * self.m * q[0]
        return d

    def potential(self, q):
        return 0.5 * self.k * (q[0] - self.r0) ** 2

    def potential_gradient(self, q):
        return np.array([self.k * (q[0] - self.r0), 0.0])


class DoublePendulum:
    """Point masses m1, m2 on massless links l1, l2, absolute angles from the downward vertical."""

    dof = 2
    vectorized = False
    m1, m2, l1, l2 = 1.0, 1.0, 1.0, 1.0

    def mass_matrix(self, q):
        c = self.m2 * self.l1 * self.l2 * np.cos(q[0] - q[1])
        return np.array([[(self.m1 + self.m2) * self.l1 ** 2, c], [c, self.m2 * self.l2 ** 2]])

    def mass_matrix_derivatives(self, q):
        s = self.m2 * self.l1 * self.l2 * np.sin(q[0] - q[1])
        return np.array([[[0.0, -s], [-s, 0.0]], [[0.0, s], [s, 0.0]]])

    def potential(self, q):
        return -G * ((self.m1 + self.m2) * self.l1 * np.cos(q[0]) + self.m2 * self.l2 * np.cos(q[1]))

    def potential_gradient(self, q):
        return G * np.array([(self.m1 + self.m2) * self.l1 * np.sin(q[0]), self.m2 * self.l2 * np.sin(q[1])])


def euler_lagrange_rhs(system, force=None):
    """Continuous M q̈ = ∂L/∂q − Ṁ q̇ + force, written from M, ∂M/∂q, ∇V (the integrator never forms q̈)."""
    n = system.dof
    force = np.zeros(n) if force is None else force

    def f(_t, y):
        q, qd = y[:n], y[n:]
        dM = system.mass_matrix_derivatives(q)
        dL_dq = 0.5 * np.einsum("kij,i,j->k", dM, qd, qd) - system.potential_gradient(q)
        M_dot_qd = np.einsum("kij,k,j->i", dM, qd, qd)
        return np.concatenate([qd, np.linalg.solve(system.mass_matrix(q), dL_dq - M_dot_qd + force)])

    return f


@pytest.mark.parametrize("system", [DoublePendulum(), PolarParticle()], ids=["double", "polar"])
def test_mass_matrix_derivatives_of_the_test_systems_match_finite_differences(system):
    q, eps = np.array([1.3, 0.4]), 1e-6
    fd = np.array([(system.mass_matrix(q + eps * e) - system.mass_matrix(q - eps * e)) / (2 * eps)
                   for e in np.eye(2)])
    np.testing.assert_allclose(system.mass_matrix_derivatives(q), fd, atol=1e-8)


@pytest.mark.parametrize("system", [DoublePendulum(), PolarParticle()], ids=["double", "polar"])
def test_d1_d2_are_the_partial_derivatives_of_the_discrete_lagrangian(system):
    vi, h, eps = MidpointVariationalIntegrator(system), 0.07, 1e-6
    q0, q1 = np.array([0.9, -0.3]), np.array([1.05, -0.2])
    fd1 = [(vi.discrete_lagrangian(q0 + eps * e, q1, h) - vi.discrete_lagrangian(q0 - eps * e, q1, h)) / (2 * eps)
           for e in np.eye(2)]
    fd2 = [(vi.discrete_lagrangian(q0, q1 + eps * e, h) - vi.discrete_lagrangian(q0, q1 - eps * e, h)) / (2 * eps)
           for e in np.eye(2)]
    np.testing.assert_allclose(vi.d1_lagrangian(q0, q1, h), fd1, atol=1e-7)
    np.testing.assert_allclose(vi.d2_lagrangian(q0, q1, h), fd2, atol=1e-7)


def test_each_step_satisfies_the_discrete_euler_lagrange_equations():
    vi, h = MidpointVariationalIntegrator(DoublePendulum()), 0.05
    trajectory = vi.simulate([1.0, 2.0], [0.0, -1.0], h, 20)
    q = trajectory.q
    for k in range(1, 20):
        np.testing.assert_allclose(vi.d2_lagrangian(q[k - 1], q[k], h) + vi.d1_lagrangian(q[k], q[k + 1], h), 0.0,
                                   atol=1e-12)


def test_double_pendulum_energy_stays_bounded_without_drift_over_ten_thousand_steps():
    """10⁴ steps at h = 0.05 s from (57°, 29°): the energy error oscillates at O(h²) and does not grow."""
    system = DoublePendulum()
    trajectory = MidpointVariationalIntegrator(system).simulate([1.0, 0.5], [0.0, 0.0], 0.05, 10_000)
    error = trajectory.energy - trajectory.energy[0]
    scale = abs(trajectory.energy[0])
    assert np.max(np.abs(error)) < 2e-3 * scale
    first, last = np.abs(error[:2000]).max(), np.abs(error[-2000:]).max()
    assert last < 1.5 * first
    drift = np.polyfit(trajectory.t, error, 1)[0] * trajectory.t[-1]
    assert abs(drift) < 1e-5 * scale


def test_momentum_of_the_cyclic_coordinate_is_conserved_to_round_off():
    """D1 L_d and D2 L_d have equal θ components when θ is cyclic, so p_θ changes only by the solver residual.

    That residual bottoms out at the resolution of the positions, about eps |M| |q|/h per step (p comes
    from (q_{k+1} − q_k)/h), which over these 400 steps allows a few 1e-13 relative.
    """
    system = PolarParticle()
    trajectory = MidpointVariationalIntegrator(system).simulate([1.3, 0.0], [0.4, 0.3], 0.05, 400)
    p_theta = trajectory.p[:, 1]
    assert np.ptp(trajectory.q[:, 0]) > 0.1  # the radius oscillates: M(q) really changes
    assert np.ptp(p_theta) < 1e-12 * abs(p_theta[0])
    np.testing.assert_allclose(p_theta[0], system.m * 1.3 ** 2 * 0.3, rtol=1e-15)


def _one_step_jacobian(step, z, eps=1e-6):
    columns = []
    for e in np.eye(z.size):
        columns.append((step(z + eps * e) - step(z - eps * e)) / (2 * eps))
    return np.array(columns).T


def test_one_step_map_preserves_the_symplectic_form_where_rk4_does_not():
    system, h = DoublePendulum(), 0.1
    vi = MidpointVariationalIntegrator(system)
    z0 = np.array([1.2, -0.5, 0.8, 0.3])  # (q, p)
    omega = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.eye(2), np.zeros((2, 2))]])

    def vi_step(z):
        return np.concatenate(vi.step(z[:2], z[2:], h))

    phi = _one_step_jacobian(vi_step, z0)
    assert np.max(np.abs(phi.T @ omega @ phi - omega)) < 1e-7
    assert np.linalg.det(phi) == pytest.approx(1.0, abs=1e-7)

    rhs = euler_lagrange_rhs(system)

    def rk4_step(z):  # the same flow by classical RK4 in (q, p): not symplectic
        def f(y):
            q, p = y[:2], y[2:]
            qd = np.linalg.solve(system.mass_matrix(q), p)
            qdd = rhs(0.0, np.concatenate([q, qd]))[2:]
            M_dot = np.einsum("kij,k->ij", system.mass_matrix_derivatives(q), qd)
            return np.concatenate([qd, system.mass_matrix(q) @ qdd + M_dot @ qd])
        k1 = f(z)
        k2 = f(z + 0.5 * h * k1)
        k3 = f(z + 0.5 * h * k2)
        k4 = f(z + h * k3)
        return z + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    phi_rk4 = _one_step_jacobian(rk4_step, z0)
    assert np.max(np.abs(phi_rk4.T @ omega @ phi_rk4 - omega)) > 1e-5


@pytest.mark.parametrize("force", [None, np.array([0.8, -0.3])], ids=["free", "forced"])
def test_second_order_convergence_against_a_tight_tolerance_solution(force):
    system, q0, qd0, T = DoublePendulum(), np.array([1.0, 0.2]), np.array([0.0, 1.0]), 1.0
    reference = solve_ivp(euler_lagrange_rhs(system, force), (0.0, T), np.concatenate([q0, qd0]), method="DOP853",
                          rtol=1e-12, atol=1e-12).y[:2, -1]
    vi = MidpointVariationalIntegrator(system)
    errors = []
    for n in (20, 40, 80, 160):
        forces = None if force is None else np.tile(force, (n, 1))
        errors.append(np.linalg.norm(vi.simulate(q0, qd0, T / n, n, forces).q[-1] - reference))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(orders, 2.0, atol=0.1)


def test_constant_force_on_a_free_body_is_integrated_exactly():
    """M constant, V = 0, F constant: q = q0 + v0 t + ½ M⁻¹F t², p = p0 + F t, which the midpoint VI reproduces."""

    class FreeBody:
        dof = 2
        vectorized = False

        def mass_matrix(self, q):
            return np.diag([2.0, 0.5])

        def mass_matrix_derivatives(self, q):
            return np.zeros((2, 2, 2))

        def potential(self, q):
            return 0.0

        def potential_gradient(self, q):
            return np.zeros(2)

    force, v0, h, n = np.array([1.0, -3.0]), np.array([0.3, 0.1]), 0.1, 50
    trajectory = MidpointVariationalIntegrator(FreeBody()).simulate([0.0, 0.0], v0, h, n, np.tile(force, (n, 1)))
    t = trajectory.t[:, None]
    np.testing.assert_allclose(trajectory.q, v0 * t + 0.5 * force / np.array([2.0, 0.5]) * t ** 2, atol=1e-12)
    np.testing.assert_allclose(trajectory.p, np.array([2.0, 0.5]) * v0 + force * t, atol=1e-12)


def test_small_angle_pendulum_follows_the_midpoint_rule_closed_form():
    """Linearised, the midpoint VI is a rotation by φ = 2 arctan(hω/2) per step: θ_k = θ0 cos(k φ)."""
    system, h, theta0 = Pendulum(), 0.1, 1e-5
    omega = np.sqrt(G / system.l)
    trajectory = MidpointVariationalIntegrator(system).simulate([theta0], [0.0], h, 500)
    k = np.arange(501)
    np.testing.assert_allclose(trajectory.q[:, 0], theta0 * np.cos(k * 2 * np.arctan(0.5 * h * omega)),
                               atol=1e-13)
    # ... and the continuous small-angle solution θ0 cos ωt within the midpoint rule's phase error h²ω³t/12.
    t = trajectory.t
    phase_error_bound = theta0 * (h * omega) ** 2 * omega * t[-1] / 12
    assert np.max(np.abs(trajectory.q[:, 0] - theta0 * np.cos(omega * t))) <= phase_error_bound


def test_newton_that_cannot_converge_raises_convergence_error():
    vi = MidpointVariationalIntegrator(DoublePendulum(), max_iter=1)
    with pytest.raises(ConvergenceError, match="did not converge"):
        vi.step([2.0, -1.0], [0.5, 0.2], 0.1)


@pytest.mark.parametrize("args", [([np.nan, 0.0], [0.0, 0.0], 0.1), ([0.0], [0.0, 0.0], 0.1),
                                  ([0.0, 0.0], [0.0, 0.0], 0.0), ([0.0, 0.0], [0.0, np.inf], 0.1)])
def test_bad_input_is_rejected_with_input_error(args):
    with pytest.raises(InputError):
        MidpointVariationalIntegrator(DoublePendulum()).step(*args)


def test_a_system_without_the_protocol_is_rejected():
    with pytest.raises(InputError, match="LagrangianSystem"):
        MidpointVariationalIntegrator(object())


def test_second_order_convergence_on_the_package_six_joint_arm():
    """The integrator on a model-file robot (M from body Jacobians) against that model's own forward dynamics."""
    system = RigidBodySystem(load_model(package_config_path("arm_6dof.yaml")))
    n, T = system.dof, 0.5
    q0 = np.full(n, 0.5)
    reference = solve_ivp(lambda _t, y: np.concatenate([y[n:], system.forward_dynamics(y[:n], y[n:], np.zeros(n))]),
                          (0.0, T), np.concatenate([q0, np.zeros(n)]), method="DOP853", rtol=1e-11,
                          atol=1e-11).y[:n, -1]
    vi = MidpointVariationalIntegrator(system)
    errors = [np.linalg.norm(vi.simulate(q0, np.zeros(n), T / N, N).q[-1] - reference) for N in (50, 100, 200)]
    np.testing.assert_allclose(np.log2(np.array(errors[:-1]) / np.array(errors[1:])), 2.0, atol=0.05)


def test_the_midpoint_step_is_symmetric():
    """A step by −h from a step's result, under the same force, returns to its start (to round-off): the condition
    for its compositions to reach orders 4 and 6."""
    system, q0, qd0, force = DoublePendulum(), np.array([1.0, 0.2]), np.array([0.0, 1.0]), np.array([0.8, -0.3])
    vi = MidpointVariationalIntegrator(system)
    p0 = system.mass_matrix(q0) @ qd0
    q1, p1, _ = vi._step(q0, p0, 0.1, force)
    q2, p2, _ = vi._step(q1, p1, -0.1, force)
    assert np.abs(q1 - q0).max() > 0.01
    np.testing.assert_allclose(q2, q0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(p2, p0, rtol=0, atol=1e-13)


@pytest.mark.parametrize(("order", "T", "steps"), [(4, 1.0, (20, 40, 80)), (6, 3.0, (48, 96, 192))])
def test_compositions_converge_at_orders_4_and_6(order, T, steps):
    """Suzuki's five stages and Kahan & Li's nine of the midpoint step, forced, against DOP853 at 1e-13 (in their
    asymptotic range: the sixth order's error at 24 steps over 3 s is that of 48)."""
    system, q0, qd0, force = DoublePendulum(), np.array([1.0, 0.2]), np.array([0.0, 1.0]), np.array([0.8, -0.3])
    reference = solve_ivp(euler_lagrange_rhs(system, force), (0.0, T), np.concatenate([q0, qd0]), method="DOP853",
                          rtol=1e-13, atol=1e-13).y[:2, -1]
    vi = MidpointVariationalIntegrator(system, order=order)
    errors = [np.linalg.norm(vi.simulate(q0, qd0, T / n, n, np.tile(force, (n, 1))).q[-1] - reference) for n in steps]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(orders, order, atol=0.3)
