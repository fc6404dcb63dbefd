"""Mass matrix, its derivatives, potential and Newton–Euler dynamics, each against an independent reference."""

import numpy as np
import pytest

from discrete_robot.errors import ModelError
from discrete_robot.model.description import model_from_dict
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import LagrangianSystem, accelerations, generalized_forces

MODELS = ["planar_2link", "arm_6dof", "mixed_tree", "spherical_root"]


def _configurations(model, count=3, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-2.5, 2.5, model.dof), rng.normal(size=model.dof), rng.normal(size=model.dof))
            for _ in range(count)]


def test_planar_2link_mass_matrix_and_potential_match_the_textbook(planar_2link):
    """Spong, Hutchinson & Vidyasagar, Robot Modeling and Control, §7.3.1 (two-link planar arm)."""
    system = RigidBodySystem(planar_2link)
    m, length, lc, inertia, g = 1.0, 1.0, 0.5, 1.0 / 12.0, 9.81
    for q1, q2 in [(0.0, 0.0), (0.3, -1.2), (2.0, 2.9)]:
        c2 = np.cos(q2)
        d11 = m * lc**2 + m * (length**2 + lc**2 + 2 * length * lc * c2) + 2 * inertia
        d12 = m * (lc**2 + length * lc * c2) + inertia
        d22 = m * lc**2 + inertia
        np.testing.assert_allclose(system.mass_matrix([q1, q2]), [[d11, d12], [d12, d22]], rtol=1e-14, atol=1e-15)
        V = m * g * lc * np.sin(q1) + m * g * (length * np.sin(q1) + lc * np.sin(q1 + q2))
        assert system.potential([q1, q2]) == pytest.approx(V, rel=1e-14, abs=1e-14)


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_equals_newton_euler_columns(request, name):
    """Column k of M is τ(q, 0, e_k) − τ(q, 0, 0) from Newton–Euler (which uses no Jacobian)."""
    system = RigidBodySystem(request.getfixturevalue(name))
    n = system.dof
    for q, _, _ in _configurations(system.model):
        columns = np.array([system.inverse_dynamics(q, np.zeros(n), e) for e in np.eye(n)]).T
        gravity = system.inverse_dynamics(q, np.zeros(n), np.zeros(n))
        M = system.mass_matrix(q)
        np.testing.assert_allclose(M, columns - gravity[:, None], atol=1e-13 * np.abs(M).max())
        assert np.all(np.linalg.eigvalsh(M) > 0.0)
        np.testing.assert_allclose(gravity, system.potential_gradient(q), atol=1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_derivatives_match_central_differences(request, name):
    system = RigidBodySystem(request.getfixturevalue(name))
    eps = 1e-6
    for q, _, _ in _configurations(system.model):
        numerical = np.array([(system.mass_matrix(q + eps * e) - system.mass_matrix(q - eps * e)) / (2 * eps)
                              for e in np.eye(system.dof)])
        np.testing.assert_allclose(system.mass_matrix_derivatives(q), numerical, atol=1e-8)
        gradient = [(system.potential(q + eps * e) - system.potential(q - eps * e)) / (2 * eps)
                    for e in np.eye(system.dof)]
        np.testing.assert_allclose(system.potential_gradient(q), gradient, atol=1e-7)


@pytest.mark.parametrize("name", MODELS)
def test_newton_euler_bias_equals_the_lagrangian_form(request, name):
    """τ(q, q̇, 0) = Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) q̇_j q̇_k + ∂V/∂q (Christoffel form from ∂M/∂q)."""
    system = RigidBodySystem(request.getfixturevalue(name))
    for q, qd, qdd in _configurations(system.model):
        dM = system.mass_matrix_derivatives(q)
        coriolis = np.einsum("kij,j,k->i", dM, qd, qd) - 0.5 * np.einsum("ijk,j,k->i", dM, qd, qd)
        expected = coriolis + system.potential_gradient(q)
        np.testing.assert_allclose(system.bias_forces(q, qd), expected, atol=1e-12)
        tau = system.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(system.forward_dynamics(q, qd, tau), qdd, atol=1e-9)


@pytest.mark.parametrize("name", MODELS)
def test_protocol_generalized_forces_equal_newton_euler_and_invert_the_accelerations(request, name):
    """The compiled Lagrangian view τ = M q̈ + C q̇ + ∂V/∂q (what tracking uses) against Newton–Euler, batched too."""
    system = RigidBodySystem(request.getfixturevalue(name))
    states = _configurations(system.model, count=4, seed=3)
    for q, qd, qdd in states:
        tau = generalized_forces(system, q, qd, qdd)
        np.testing.assert_allclose(tau, system.inverse_dynamics(q, qd, qdd), atol=1e-10)
        np.testing.assert_allclose(accelerations(system, q, qd, tau), qdd, atol=1e-9)
    q, qd, qdd = (np.array(column) for column in zip(*states, strict=True))
    np.testing.assert_allclose(generalized_forces(system, q, qd, qdd),
                               [system.inverse_dynamics(*state) for state in states], atol=1e-10)


def test_batched_evaluation_equals_single(mixed_tree):
    system = RigidBodySystem(mixed_tree)
    Q = np.random.default_rng(3).uniform(-2, 2, (5, mixed_tree.dof))
    np.testing.assert_array_equal(system.mass_matrix(Q)[3], system.mass_matrix(Q[3]))
    np.testing.assert_array_equal(system.potential(Q)[3], system.potential(Q[3]))
    np.testing.assert_array_equal(system.mass_matrix_derivatives(Q)[3], system.mass_matrix_derivatives(Q[3]))


def test_combined_evaluations_equal_the_separate_ones(mixed_tree):
    system = RigidBodySystem(mixed_tree)
    Q = np.random.default_rng(5).uniform(-2, 2, (3, mixed_tree.dof))
    M, V = system.mass_matrix_and_potential(Q)
    np.testing.assert_array_equal(M, system.mass_matrix(Q))
    np.testing.assert_allclose(V, system.potential(Q), rtol=1e-14, atol=1e-14)
    dM, dV = system.mass_matrix_and_potential_derivatives(Q)
    np.testing.assert_array_equal(dM, system.mass_matrix_derivatives(Q))
    np.testing.assert_allclose(dV, system.potential_gradient(Q), rtol=1e-13, atol=1e-13)


def test_cyclic_first_joint_leaves_the_mass_matrix_bitwise_unchanged(planar_2link):
    system = RigidBodySystem(planar_2link)
    a = system.mass_matrix(np.array([0.1, 0.7]))
    for q1 in (1.0, -2.7, 1e-9, 123.4):
        np.testing.assert_array_equal(system.mass_matrix(np.array([q1, 0.7])), a)
    assert np.all(system.mass_matrix_derivatives(np.array([0.4, 0.7]))[0] == 0.0)


def test_energy_and_protocol(planar_2link):
    system = RigidBodySystem(planar_2link)
    assert isinstance(system, LagrangianSystem)
    q, qd = np.array([0.3, 0.4]), np.array([1.0, -2.0])
    T = 0.5 * qd @ system.mass_matrix(q) @ qd
    assert system.kinetic_energy(q, qd) == pytest.approx(T)
    assert system.total_energy(q, qd) == pytest.approx(T + system.potential(q))


def test_floating_base_is_refused(mixed_tree_data):
    mixed_tree_data["base"] = {"name": "base", "type": "floating", "mass": 10.0, "inertia": [1.0, 1.0, 1.0]}
    with pytest.raises(ModelError, match="floating"):
        RigidBodySystem(model_from_dict(mixed_tree_data))
