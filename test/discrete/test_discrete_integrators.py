"""The integrator choice: the three steppers solve the same equations, each with its own energy behaviour."""

import numpy as np
import pytest

from discrete_robot.discrete.integrators import IntegratorKind, make_stepper
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import accelerations


@pytest.fixture(scope="module")
def system():
    return RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))


def _run(stepper, system, q, qd, tau, h, steps):
    energies = [system.total_energy(q, qd)]
    for _ in range(steps):
        q, qd = stepper.step(q, qd, tau, h)
        energies.append(system.total_energy(q, qd))
    return q, qd, np.array(energies)


def test_all_integrators_agree_on_a_short_forced_motion(system):
    q0, qd0, tau = np.array([0.3, -0.2]), np.array([0.5, 0.1]), np.array([2.0, -1.0])
    finals = {kind: _run(make_stepper(kind, system), system, q0, qd0, tau, 0.005, 100)[:2] for kind in IntegratorKind}
    reference = np.concatenate(finals[IntegratorKind.RK45])
    for kind in (IntegratorKind.DISCRETE, IntegratorKind.VARIATIONAL):
        # both are second-order: at h = 5 ms over 0.5 s their errors are O(1e-4)
        np.testing.assert_allclose(np.concatenate(finals[kind]), reference, atol=2e-3)


def test_energy_behaviour_of_each_integrator(system):
    q0, qd0, zero = np.array([0.3, 0.5]), np.zeros(2), np.zeros(2)
    drift = {}
    for kind in IntegratorKind:
        _, _, energy = _run(make_stepper(kind.value, system), system, q0, qd0, zero, 0.02, 100)
        drift[kind] = np.max(np.abs(energy - energy[0])) / abs(energy[0])
    assert drift[IntegratorKind.DISCRETE] < 1e-13             # conserved to round-off
    assert 1e-9 < drift[IntegratorKind.VARIATIONAL] < 0.05    # symplectic: a bounded O(h²) oscillation
    assert drift[IntegratorKind.RK45] < 1e-6                  # tight tolerances, slow leak


def test_protocol_accelerations_match_the_robot_forward_dynamics(system):
    class ProtocolOnly:
        dof = 2
        vectorized = False
        mass_matrix = staticmethod(system.mass_matrix)
        mass_matrix_derivatives = staticmethod(system.mass_matrix_derivatives)
        potential = staticmethod(system.potential)
        potential_gradient = staticmethod(system.potential_gradient)

    q, qd, tau = np.array([0.4, -1.1]), np.array([1.5, -0.7]), np.array([0.3, 2.0])
    np.testing.assert_allclose(accelerations(ProtocolOnly(), q, qd, tau), system.forward_dynamics(q, qd, tau),
                               atol=1e-12)
    # batched, through the system's one-pass evaluation: each row is the Newton–Euler forward dynamics
    rng = np.random.default_rng(4)
    Q, QD, TAU = rng.uniform(-2.0, 2.0, (3, 5, 2))
    expected = [system.forward_dynamics(*row) for row in zip(Q, QD, TAU, strict=True)]
    np.testing.assert_allclose(accelerations(system, Q, QD, TAU), expected, atol=1e-11)


def test_unknown_integrator_and_bad_input_are_refused(system):
    with pytest.raises(InputError, match="integrator must be one of"):
        make_stepper("euler", system)
    with pytest.raises(InputError, match="finite"):
        make_stepper(IntegratorKind.RK45, system).step([0.0, np.nan], [0.0, 0.0], [0.0, 0.0], 0.01)
    with pytest.raises(InputError):
        make_stepper(IntegratorKind.DISCRETE, system).step([0.0, 0.0], [0.0, 0.0], [0.0], 0.01)


def test_a_continuing_discrete_step_is_the_models_step_and_still_checks_its_forces(system):
    """The stepper does not re-check a state the model returned; the step is the same, forces are still checked."""
    from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel

    stepper, model = make_stepper(IntegratorKind.DISCRETE, system), DiscreteDynamicModel(system)
    q, qd, tau = np.array([0.3, -0.2]), np.array([0.5, 0.1]), np.array([2.0, -1.0])
    q1, qd1 = stepper.step(q, qd, tau, 0.005)
    q2, qd2 = stepper.step(q1, qd1, tau, 0.005)                              # continuing
    expected = model.step(q1, qd1, tau, 0.005, guess=2.0 * qd1 - qd)
    np.testing.assert_array_equal(q2, expected.q)
    np.testing.assert_array_equal(qd2, expected.qd)
    with pytest.raises(InputError, match="F: values must be finite"):
        stepper.step(q2, qd2, [np.nan, 0.0], 0.005)


def test_a_joint_far_from_zero_keeps_t_plus_v_as_a_joint_near_zero(system):
    """q(k+1) = q(k) + Δq rounds Δq to the spacing of q(k), which breaks the energy identity by that much each
    step; the stepper steps on the angles less their whole turns. The same motion 160 turns (1005 rad) from zero
    then conserves T + V as it does near zero (without the turns carried, 1e-11 over these steps), and the q it
    returns is the unreduced angle: the motion near zero shifted by the turns."""
    tau, turns = np.zeros(2), 160 * 2.0 * np.pi
    q0, qd0 = np.array([0.6, -0.4]), np.array([4.0, -3.0])
    near, _, _ = _run(make_stepper(IntegratorKind.DISCRETE, system), system, q0, qd0, tau, 1e-3, 200)
    far, _, _ = _run(make_stepper(IntegratorKind.DISCRETE, system), system, q0 + turns, qd0, tau, 1e-3, 200)
    np.testing.assert_allclose(far - turns, near, rtol=0.0, atol=1e-10)
    stepper, q, qd = make_stepper(IntegratorKind.DISCRETE, system), q0 + turns, qd0
    e0, largest = system.total_energy(q, qd), 0.0
    for _ in range(100):
        q, qd, energies = _run(stepper, system, q, qd, tau, 1e-3, 100)
        largest = max(largest, np.abs(energies[-1] - e0) / abs(e0))
    assert largest <= 1e-12
