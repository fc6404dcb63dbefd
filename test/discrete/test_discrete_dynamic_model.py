"""The discrete dynamic robot model (Potts, seed 000): conservation laws, work-energy balance,
second-order convergence to the continuous solution, and the step solver's interface."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.partial_difference import PathOperator
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem


class PolarParticle:
    """A particle of mass m in the plane in polar coordinates (r, θ) with the central potential V = −k/r.

    θ is cyclic: T = ½ m (ṙ² + r² θ̇²) and V do not depend on it, so p_θ = m r² θ̇ is conserved.
    Written by hand (not vectorized), so it also exercises the model's per-configuration path.
    """

    dof = 2
    vectorized = False

    def __init__(self, m=2.0, k=3.0):
        self.m, self.k = m, k

    def mass_matrix(self, q):
        return np.diag([self.m, self.m * q[0] ** 2])

    def mass_matrix_derivatives(self, q):
        d = np.zeros((2, 2, 2))
        d[0, 1, 1] = 2.0 * self.m * q[0]
        return d

    def potential(self, q):
        return -self.k / q[0]

    def potential_gradient(self, q):
        return np.array([self.k / q[0] ** 2, 0.0])


@pytest.fixture(scope="module")
def planar_2link():
    return RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))


@pytest.fixture(scope="module")
def arm_6dof():
    return RigidBodySystem(load_model(package_config_path("arm_6dof.yaml")))


def _relative_drift(energy):
    return float(np.max(np.abs(energy - energy[0])) / abs(energy[0]))


@pytest.mark.slow
def test_planar_2link_conserves_energy_to_round_off_over_10000_large_steps(planar_2link):
    model = DiscreteDynamicModel(planar_2link)
    trajectory = model.simulate([-1.0, 0.8], [0.5, -0.5], 0.05, 10_000)
    reference = [planar_2link.total_energy(q, qd) for q, qd in zip(trajectory.q[::1000], trajectory.qd[::1000],
                                                                    strict=True)]
    np.testing.assert_allclose(trajectory.energy[::1000], reference, rtol=1e-13)   # the energy is T + V
    assert np.ptp(trajectory.q[:, 1]) > 1.0                                          # a large, non-trivial motion
    assert _relative_drift(trajectory.energy) <= 1e-12


@pytest.mark.slow
def test_six_joint_arm_conserves_energy_to_round_off_over_10000_large_steps(arm_6dof):
    model = DiscreteDynamicModel(arm_6dof)
    trajectory = model.simulate([0.0, 1.17, 0.3, 0.2, 0.3, 0.0], [0.5, 0.0, 0.0, 0.0, 0.0, 0.0], 0.05, 10_000)
    assert np.all(np.ptp(trajectory.q, axis=0) > 0.1)                               # every joint moves
    assert _relative_drift(trajectory.energy) <= 1e-12


def test_neuman_tourassis_operator_conserves_energy_too(planar_2link):
    model = DiscreteDynamicModel(planar_2link, PathOperator.NEUMAN_TOURASSIS)
    trajectory = model.simulate([0.3, 0.5], [0.0, 0.0], 0.05, 400)
    assert _relative_drift(trajectory.energy) <= 1e-12


def test_a_runge_kutta_step_of_the_same_size_drifts(planar_2link):
    """The reference point for 'conserved': the continuous equations with a fixed-step RK4 at h = 0.05 s."""
    def rk4(q, qd, h):
        def f(y):
            return np.concatenate([y[2:], planar_2link.forward_dynamics(y[:2], y[2:], np.zeros(2))])
        y = np.concatenate([q, qd])
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y[:2], y[2:]

    q, qd = np.array([-1.0, 0.8]), np.array([0.5, -0.5])
    energy = [planar_2link.total_energy(q, qd)]
    for _ in range(400):
        q, qd = rk4(q, qd, 0.05)
        energy.append(planar_2link.total_energy(q, qd))
    assert _relative_drift(np.array(energy)) > 1e-6


def test_cyclic_coordinate_momentum_is_conserved_exactly_polar_particle():
    system = PolarParticle()
    model = DiscreteDynamicModel(system)
    trajectory = model.simulate([1.0, 0.0], [0.3, 1.1], 0.1, 500)    # an eccentric orbit
    p_theta = system.m * trajectory.q[:, 0] ** 2 * trajectory.qd[:, 1]
    assert np.ptp(trajectory.q[:, 0]) > 0.3
    assert np.max(np.abs(p_theta - p_theta[0])) <= 1e-14 * abs(p_theta[0])
    assert _relative_drift(trajectory.energy) <= 1e-13


def test_cyclic_first_joint_momentum_without_gravity_and_its_exact_impulse(planar_2link):
    data = {"name": "free_2link", "gravity": [0.0, 0.0, 0.0], "base": {"name": "base"}, "links": [
        {"name": "l1", "parent": "base", "joint": {"name": "j1", "type": "revolute"}, "mass": 1.0,
         "com": [0.5, 0.0, 0.0], "inertia": [0.0, 1 / 12, 1 / 12]},
        {"name": "l2", "parent": "l1", "joint": {"name": "j2", "type": "revolute"}, "mass": 1.0,
         "com": [0.5, 0.0, 0.0], "inertia": [0.0, 1 / 12, 1 / 12]}]}
    system = RigidBodySystem(model_from_dict(data))
    model = DiscreteDynamicModel(system)
    h, steps = 0.05, 2000
    free = model.simulate([0.4, 0.3], [1.0, -2.5], h, steps)
    momentum = np.einsum("kj,kj->k", [system.mass_matrix(q)[0] for q in free.q], free.qd)   # Σ_j a_1j q̇_j
    # round-off only: a few ε per step, accumulating like a random walk over 2000 steps
    assert np.max(np.abs(momentum - momentum[0])) <= 1e-13 * abs(momentum[0])
    # a torque on the cyclic joint only: the momentum changes by exactly its impulse (1.5), step after step
    tau = 0.7
    forced = model.simulate([0.4, 0.3], [1.0, -2.5], h, 200, forces=[tau, 0.0])
    momentum = np.einsum("kj,kj->k", [system.mass_matrix(q)[0] for q in forced.q], forced.qd)
    np.testing.assert_allclose(np.diff(momentum), tau * h, rtol=1e-12)


def test_energy_change_equals_the_discrete_work_of_the_forces(planar_2link):
    rng = np.random.default_rng(7)
    forces = rng.normal(scale=5.0, size=(300, 2))
    model = DiscreteDynamicModel(planar_2link)
    trajectory = model.simulate([0.2, -0.4], [0.0, 1.0], 0.02, 300, forces=forces)
    work = np.sum(trajectory.forces * np.diff(trajectory.q, axis=0), axis=1)         # Σ_r F_r Δq_r
    scale = np.max(np.abs(trajectory.energy))
    np.testing.assert_allclose(np.diff(trajectory.energy), work, atol=1e-13 * scale)
    assert np.max(np.abs(work)) > 0.1


def test_second_order_convergence_to_a_tight_continuous_solution(planar_2link):
    q0, qd0, T = np.array([-1.0, 0.8]), np.array([0.5, -0.5]), 1.0

    def f(t, y):
        return np.concatenate([y[2:], planar_2link.forward_dynamics(y[:2], y[2:], np.zeros(2))])

    reference = solve_ivp(f, (0.0, T), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    errors = {}
    for operator in PathOperator:
        model = DiscreteDynamicModel(planar_2link, operator)
        errors[operator] = []
        for h in (0.02, 0.01, 0.005):
            trajectory = model.simulate(q0, qd0, h, int(round(T / h)))
            errors[operator].append(np.max(np.abs(np.concatenate([trajectory.q[-1], trajectory.qd[-1]]) - reference)))
    orders = {op: np.log2(np.array(e[:-1]) / e[1:]) for op, e in errors.items()}
    assert np.all(np.abs(orders[PathOperator.SYMMETRIC] - 2.0) < 0.1), orders
    # the single Neuman–Tourassis path is not time-symmetric: first order only
    assert np.all(orders[PathOperator.NEUMAN_TOURASSIS] < 1.5), orders


def test_resting_at_an_equilibrium_stays_there_through_the_zero_step_limit(planar_2link):
    """Δq_r = 0 for every r: the quotients come from the derivative form; the arm must not move."""
    model = DiscreteDynamicModel(planar_2link)
    result = model.step([-np.pi / 2, 0.0], [0.0, 0.0], [0.0, 0.0], 0.05)
    np.testing.assert_allclose(result.qd, 0.0, atol=1e-14)
    np.testing.assert_allclose(result.q, [-np.pi / 2, 0.0], atol=1e-15)


def test_generalized_forces_invert_the_step(arm_6dof):
    model = DiscreteDynamicModel(arm_6dof)
    q0 = np.array([0.1, -0.4, 0.9, -0.2, 0.5, 0.3])
    qd0 = np.array([0.2, -0.1, 0.3, 0.0, 0.4, -0.2])
    F = np.array([5.0, -20.0, 8.0, 1.0, -0.5, 0.2])
    result = model.step(q0, qd0, F, 0.01)
    assert result.iterations >= 1 and result.residual_norm < 1e-6
    np.testing.assert_allclose(model.generalized_forces(q0, qd0, result.q, result.qd, 0.01), F, atol=1e-9)
    with pytest.raises(InputError, match="smoothing formula"):
        model.generalized_forces(q0, qd0, result.q + 1e-3, result.qd, 0.01)


def test_energy_matches_the_system(planar_2link):
    model = DiscreteDynamicModel(planar_2link)
    assert model.energy([0.3, 0.2], [1.0, -1.0]) == pytest.approx(planar_2link.total_energy([0.3, 0.2], [1.0, -1.0]))


def test_force_schedules(planar_2link):
    model = DiscreteDynamicModel(planar_2link)
    constant = model.simulate([0.1, 0.2], [0.0, 0.0], 0.01, 5, forces=[1.0, -1.0])
    per_step = model.simulate([0.1, 0.2], [0.0, 0.0], 0.01, 5, forces=np.tile([1.0, -1.0], (5, 1)))
    by_state = model.simulate([0.1, 0.2], [0.0, 0.0], 0.01, 5, forces=lambda t, q, qd: np.array([1.0, -1.0]))
    np.testing.assert_array_equal(constant.q, per_step.q)
    np.testing.assert_array_equal(constant.q, by_state.q)
    assert constant.t[-1] == pytest.approx(0.05)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"q0": [0.1, np.nan]}, "finite"),
    ({"q0": [0.1, 0.2, 0.3]}, "expected 2 values"),
    ({"dt": 0.0}, "time step"),
    ({"dt": np.inf}, "time step"),
    ({"steps": -1}, "steps"),
    ({"forces": np.zeros((3, 2))}, "forces"),
    ({"forces": lambda t, q, qd: [np.nan, 0.0]}, "finite"),
])
def test_invalid_input_is_refused(planar_2link, kwargs, message):
    args = {"q0": [0.1, 0.2], "qd0": [0.0, 0.0], "dt": 0.01, "steps": 5} | kwargs
    with pytest.raises(InputError, match=message):
        DiscreteDynamicModel(planar_2link).simulate(**args)


def test_non_convergence_is_a_clear_error(planar_2link):
    model = DiscreteDynamicModel(planar_2link, max_iter=1)
    with pytest.raises(ConvergenceError, match="did not converge.*reduce the time step"):
        model.step([0.3, 0.5], [4.0, -9.0], [0.0, 0.0], 0.05)
