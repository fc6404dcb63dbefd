"""Position limits as plastic stops: the impulse against its closed form and the impact laws, and a falling
rod that hits its stop against the analytic impact speed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from discrete_robot.discrete.joint_stops import stop_at_limits
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.description import model_from_dict
from discrete_robot.model.dynamics import RigidBodySystem

G, MASS, LENGTH = 9.81, 1.0, 1.0
STOP = 1.0  # rad


def _spd(seed_matrix: np.ndarray) -> np.ndarray:
    n = seed_matrix.shape[0]
    return seed_matrix @ seed_matrix.T + 0.1 * np.eye(n)


def test_one_joint_loses_half_its_velocity_squared_over_the_inverse_mass_diagonal():
    """Stopping joint i: q̇_i → 0, ΔT = −½ q̇_i² / (M⁻¹)_ii, and p_r = (M q̇)_r unchanged for r ≠ i."""
    rng = np.random.default_rng(3)
    M = _spd(rng.normal(size=(4, 4)))
    qd = np.array([0.3, 2.0, -0.7, 0.4])
    lower, upper = np.full(4, -1.0), np.full(4, 1.0)
    result = stop_at_limits(M, [0.0, 1.05, 0.2, -0.3], qd, lower, upper)
    inverse = np.linalg.inv(M)
    expected_loss = 0.5 * qd[1] ** 2 / inverse[1, 1]
    assert result.stopped == (1,)
    assert result.q[1] == 1.0 and result.qd[1] == 0.0
    assert result.removed_energy == pytest.approx(expected_loss, rel=1e-12)
    kinetic = 0.5 * qd @ M @ qd - 0.5 * result.qd @ M @ result.qd
    assert kinetic == pytest.approx(expected_loss, rel=1e-12)
    others = [0, 2, 3]
    assert np.allclose((M @ result.qd)[others], (M @ qd)[others], rtol=0.0, atol=1e-12)


def test_a_joint_moving_inward_from_its_limit_is_not_stopped():
    M = np.diag([1.0, 2.0])
    result = stop_at_limits(M, [1.0, 0.0], [-0.5, 0.3], np.full(2, -1.0), np.full(2, 1.0))
    assert result.stopped == () and result.removed_energy == 0.0
    assert result.qd.tolist() == [-0.5, 0.3]


@settings(max_examples=200, deadline=None)
@given(seed=arrays(float, (4, 4), elements=st.floats(-2.0, 2.0)),
       qd=arrays(float, 4, elements=st.floats(-5.0, 5.0)),
       side=arrays(np.int8, 4, elements=st.sampled_from([-1, 0, 1])))
def test_the_stop_obeys_the_impact_laws(seed, qd, side):
    """For any positive-definite M, velocities and set of joints on their limits: no joint on a limit moves
    outward afterwards; each stop pushes inward only; the other joints' momenta are unchanged; the kinetic
    energy falls by exactly the reported amount (never rises)."""
    M = _spd(seed)
    lower, upper = np.full(4, -1.0), np.full(4, 1.0)
    q = np.where(side > 0, 1.2, np.where(side < 0, -1.2, 0.0))
    result = stop_at_limits(M, q, qd, lower, upper)
    scale = 1e-9 * (1.0 + np.max(np.abs(qd)))
    assert np.all(side * result.qd <= scale)
    impulse = M @ (result.qd - qd)
    assert np.all(side * impulse <= scale * np.max(np.abs(M)))
    free = [i for i in range(4) if i not in result.stopped]
    assert np.allclose(impulse[free], 0.0, atol=scale * np.max(np.abs(M)))
    loss = 0.5 * qd @ M @ qd - 0.5 * result.qd @ M @ result.qd
    assert result.removed_energy >= 0.0
    assert loss == pytest.approx(result.removed_energy, rel=1e-9, abs=1e-12)


def _falling_rod():
    """A uniform rod hinged at one end about y, horizontal at q = 0, falling (q grows) until its stop."""
    return model_from_dict({
        "name": "rod", "gravity": [0.0, 0.0, -G], "base": {"name": "base", "type": "fixed"},
        "links": [{"name": "rod", "parent": "base",
                   "joint": {"name": "hinge", "type": "revolute", "axis": [0.0, 1.0, 0.0],
                             "limits": {"lower": -STOP, "upper": STOP}},
                   "mass": MASS, "com": [LENGTH / 2, 0.0, 0.0],
                   "inertia": [0.0, MASS * LENGTH ** 2 / 12, MASS * LENGTH ** 2 / 12]}]})


def test_a_falling_rod_stops_at_its_limit_losing_its_analytic_impact_energy():
    """Energy conservation gives the impact speed, ½ I ω² = m g (l/2) sin(stop) (I = m l²/3); the plastic stop
    removes that kinetic energy (plus at most the fall within the crossing step, m g (l/2) ω h), and the rod
    then rests on the stop (gravity holds it there) with T + V = V(stop)."""
    model = _falling_rod()
    h = 1e-3
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", h, [0.0], [0.0], model.lower, model.upper)
    positions, removed_at_impact = [], None
    for _ in range(1500):
        simulation.step(1, lambda t, q, qd: np.zeros(1))
        positions.append(simulation.q[0])
        if removed_at_impact is None and simulation.stop_energy > 0.0:
            removed_at_impact = simulation.stop_energy
    impact_energy = MASS * G * LENGTH / 2 * np.sin(STOP)
    impact_speed = np.sqrt(2.0 * impact_energy / (MASS * LENGTH ** 2 / 3))
    assert max(positions) == STOP
    assert simulation.q[0] == STOP and simulation.qd[0] == 0.0
    assert abs(removed_at_impact - impact_energy) <= MASS * G * LENGTH / 2 * impact_speed * h
    assert simulation.energy() == pytest.approx(-impact_energy, rel=1e-12)


def test_set_state_outside_the_limits_is_refused_naming_the_joint():
    model = _falling_rod()
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3, [0.0], [0.0], model.lower,
                                     model.upper, joint_names=model.joint_names)
    with pytest.raises(InputError, match="hinge"):
        simulation.reset([1.5], [0.0])


@given(arrays(float, (4, 4), elements=st.floats(-2.0, 2.0)), arrays(float, 4, elements=st.floats(-3.0, 3.0)))
@settings(max_examples=60, deadline=None)
def test_an_elastic_stop_reverses_the_stopped_joints_and_keeps_the_kinetic_energy(seed, qd):
    """Elastic (restitution 1): every stopped joint's velocity reversed exactly, T = ½ q̇ᵀ M q̇ unchanged to
    round-off, the positions untouched (past the limit), and p_r = (M q̇)_r unchanged for the joints not stopped
    (the impulse acts on the stopped joints only); nothing is counted as removed."""
    M = _spd(seed)
    q = np.array([1.02, -1.01, 0.3, 1.0])        # joints 0, 3 at or past the upper limit, joint 1 past the lower
    lower, upper = np.full(4, -1.0), np.full(4, 1.0)
    result = stop_at_limits(M, q, qd, lower, upper, elastic=True)
    assert np.array_equal(result.q, q) and result.removed_energy == 0.0
    stopped = list(result.stopped)
    assert np.array_equal(result.qd[stopped], -qd[stopped])
    assert 2 not in stopped                      # only joints on a limit are stopped
    scale = max(1.0, float(qd @ M @ qd))
    assert abs(0.5 * result.qd @ M @ result.qd - 0.5 * qd @ M @ qd) <= 1e-13 * scale
    free = [r for r in range(4) if r not in stopped]
    assert np.allclose((M @ result.qd)[free], (M @ qd)[free], rtol=0.0, atol=1e-12 * scale)


@pytest.mark.slow
def test_the_stock_panda_with_elastic_finger_stops_keeps_t_plus_v_over_1e5_steps():
    """Issue 35: the stock Panda (mimic fingers folded, 8 DOF), released from its initial pose nudged by 0.1 rad
    with small velocities, no torque, damping or friction, its stops elastic: its free fingers bounce between 0
    and 0.04 m and T + V stays within 1e-11 relative over 10⁵ steps of 1 ms (the discrete model's conservation
    through every impact). With plastic stops it would lose each impact's energy; without stops the fingers
    slide out without bound."""
    from discrete_robot.model.description import load_model
    from discrete_robot.model.example_robots import example_robot_path

    model = load_model(example_robot_path("panda"))
    q0 = np.clip(model.initial_positions + 0.1, model.lower, model.upper)
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3, q0, np.linspace(0.2, -0.2, model.dof),
                                     model.lower, model.upper, elastic_stops=True)
    energy0, worst, bounces = simulation.energy(), 0.0, 0
    for _ in range(100):
        simulation.step(1000, np.zeros(model.dof))
        worst = max(worst, abs(simulation.energy() - energy0) / abs(energy0))
        bounces += bool(simulation.reached_upper[-1] or simulation.reached_lower[-1])
    print(f"T + V {energy0:.3f} J, largest relative change {worst:.2e}; stops reached: lower "
          f"{np.flatnonzero(simulation.reached_lower).tolist()}, upper {np.flatnonzero(simulation.reached_upper)}")
    assert simulation.reached_upper[-1] and simulation.reached_lower[-1]     # the finger hit both of its stops
    assert worst <= 1e-11 and simulation.stop_energy == 0.0
