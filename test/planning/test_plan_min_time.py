"""Minimum-time path following on the discrete model (discrete_robot.planning.min_time).

Independent references used here:
* the planar 2-link arm written out in closed form (M(q), V(q) of two uniform 1 m, 1 kg rods), with the
  discrete Lagrange equations (Potts eq. 3.5 with Q replaced by q̇_i(k) q̇_j(k+1)) and Gotusso's symmetric
  partial difference re-derived below for n = 2 — the torque-limit check recomputes every planned step
  with it, not with the package's discrete model;
* the continuous time-optimal duration from integrating the maximum/minimum acceleration curves of the
  continuous dynamics (planning.continuous_topp, fed the closed-form arm);
* the generic SLSQP formulation over the time steps (for optimality on the same grid);
* for the 6-joint arm, the discrete energy balance Σ_r F_r Δq_r = ΔT + ΔV, which holds for any partial
  difference operator (Potts eq. 3.6).
"""

from pathlib import Path

import numpy as np
import pytest

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.continuous_topp import time_optimal_segment
from discrete_robot.planning.min_time import plan_min_time, plan_min_time_nlp, replay
from discrete_robot.planning.path import WaypointPath

CONFIG = Path(__file__).resolve().parents[2] / "config"
G = 9.81
START, GOAL = np.array([0.0, 0.0]), np.array([np.pi / 2, np.pi / 4])
EFFORT = np.array([20.0, 10.0])


class ClosedFormTwoLink:
    """Two uniform rods (1 m, 1 kg, I = 1/12 kg m² about the CoM), revolute about z, gravity −y."""

    dof = 2
    vectorized = False

    def mass_matrix(self, q):
        c2 = np.cos(q[1])
        inertia = 1.0 / 12.0
        m22 = inertia + 0.25
        m12 = m22 + 0.5 * c2
        return np.array([[inertia + 0.25 + 1.0 + m22 + c2, m12], [m12, m22]])

    def mass_matrix_derivatives(self, q):
        s2 = np.sin(q[1])
        derivatives = np.zeros((2, 2, 2))
        derivatives[1] = [[-s2, -0.5 * s2], [-0.5 * s2, 0.0]]
        return derivatives

    def potential(self, q):
        return G * (1.5 * np.sin(q[0]) + 0.5 * np.sin(q[0] + q[1]))

    def potential_gradient(self, q):
        return G * np.array([1.5 * np.cos(q[0]) + 0.5 * np.cos(q[0] + q[1]), 0.5 * np.cos(q[0] + q[1])])


def gotusso_quotients(f, q0, q1):
    """Δ_r f/Δq_r for n = 2: the average of the two edge paths of the box from q0 to q1 (eqs. 2.7, 2.8)."""
    def at(a, b):
        return f(np.array([a, b]))
    d1 = 0.5 * ((at(q1[0], q1[1]) - at(q0[0], q1[1])) + (at(q1[0], q0[1]) - at(q0[0], q0[1])))
    d2 = 0.5 * ((at(q0[0], q1[1]) - at(q0[0], q0[1])) + (at(q1[0], q1[1]) - at(q1[0], q0[1])))
    return d1 / (q1[0] - q0[0]), d2 / (q1[1] - q0[1])


def reference_step_torques(q0, qd0, q1, qd1, dt):
    """F_r = Δ[Σ_j a_rj q̇_j]/Δt − ½ Σ_ij (Δ_r a_ij/Δq_r) q̇_i(k) q̇_j(k+1) + Δ_r V/Δq_r (closed-form arm)."""
    arm = ClosedFormTwoLink()
    momentum_rate = (arm.mass_matrix(q1) @ qd1 - arm.mass_matrix(q0) @ qd0) / dt
    dM = gotusso_quotients(arm.mass_matrix, q0, q1)
    dV = gotusso_quotients(arm.potential, q0, q1)
    return np.array([momentum_rate[r] - 0.5 * qd0 @ dM[r] @ qd1 + dV[r] for r in range(2)])


@pytest.fixture(scope="module")
def arm():
    model = load_model(CONFIG / "planar_2link.yaml")
    return model, DiscreteDynamicModel(RigidBodySystem(model))


@pytest.fixture(scope="module")
def limits(arm):
    model, _ = arm
    return JointLimits.create(model.joint_names, EFFORT, velocity=[50.0, 50.0], lower=model.lower,
                              upper=model.upper)


@pytest.fixture(scope="module")
def plan(arm, limits):
    return plan_min_time(arm[1], WaypointPath([START, GOAL]), limits, grid_points=60)


def test_every_step_respects_the_torque_limits_recomputed_independently(plan):
    reference = np.array([reference_step_torques(plan.q[k], plan.qd[k], plan.q[k + 1], plan.qd[k + 1], plan.dt[k])
                          for k in range(plan.steps)])
    np.testing.assert_allclose(plan.torques, reference, rtol=0, atol=1e-9)
    assert np.all(np.abs(reference) <= EFFORT * (1.0 + 1e-9))
    # the smoothing formula ties the planned nodes, velocities and time steps together
    np.testing.assert_allclose(np.diff(plan.q, axis=0), 0.5 * plan.dt[:, None] * (plan.qd[:-1] + plan.qd[1:]),
                               rtol=0, atol=1e-12)


def test_some_joint_is_at_its_torque_limit_at_every_step(plan):
    """Bang-bang: the independent torques put at least one joint within 1e-6 of its limit at each step."""
    reference = np.array([reference_step_torques(plan.q[k], plan.qd[k], plan.q[k + 1], plan.qd[k + 1], plan.dt[k])
                          for k in range(plan.steps)])
    utilisation = np.max(np.abs(reference) / EFFORT, axis=1)
    assert np.all(utilisation >= 1.0 - 1e-6), np.flatnonzero(utilisation < 1.0 - 1e-6)
    # here joint 1 decides throughout: +20 N m while accelerating, −20 N m while braking, one switch
    np.testing.assert_allclose(np.abs(reference[:, 0]), EFFORT[0], rtol=1e-6)
    assert np.count_nonzero(np.diff(np.sign(reference[:, 0]))) == 1
    assert reference[0, 0] > 0.0 > reference[-1, 0]


def test_the_plan_starts_and_ends_at_rest_at_the_waypoints(plan):
    np.testing.assert_array_equal(plan.q[0], START)
    np.testing.assert_array_equal(plan.q[-1], GOAL)
    np.testing.assert_array_equal(plan.qd[0], 0.0)
    assert np.max(np.abs(plan.qd[-1])) < 1e-12
    assert plan.t[0] == 0.0 and np.all(np.diff(plan.t) > 0.0)
    assert plan.duration == pytest.approx(np.sum(plan.dt))


def test_replaying_the_torques_through_the_discrete_model_reproduces_the_plan(arm, plan):
    positions = replay(arm[1], plan)
    assert np.max(np.abs(positions - plan.q)) <= 1e-9


def test_duration_converges_to_the_continuous_time_optimum(arm, limits):
    """Durations on refined grids approach the continuous optimum at second order (the discrete model's order)."""
    continuous = time_optimal_segment(ClosedFormTwoLink(), START, GOAL, EFFORT).duration
    path = WaypointPath([START, GOAL])
    errors = np.array([abs(plan_min_time(arm[1], path, limits, grid_points=points).duration - continuous)
                       for points in (20, 40, 80, 160)])
    assert np.all(np.diff(errors) < 0.0), errors
    orders = np.log2(errors[:-1] / errors[1:])
    assert np.all((orders > 1.5) & (orders < 2.6)), orders
    assert errors[-1] / continuous < 1e-3


def test_no_faster_motion_exists_on_the_same_grid(arm, limits):
    """The generic NLP (SLSQP over the time steps from a generic start) finds no shorter duration on the
    planner's grid, and speeding up any single node beyond the plan breaks a torque limit."""
    path = WaypointPath([START, GOAL])
    fast = plan_min_time(arm[1], path, limits, grid_points=12)
    nlp = plan_min_time_nlp(arm[1], path, limits, nodes_s=fast.s)
    assert nlp.duration >= fast.duration * (1.0 - 1e-8)
    assert nlp.duration == pytest.approx(fast.duration, rel=1e-6)
    direction = (GOAL - START) / np.linalg.norm(GOAL - START)
    for k in range(1, fast.steps):
        speed = fast.path_speed.copy()
        speed[k] *= 1.0 + 1e-5
        worst = 0.0
        for j in (k - 1, k):
            dt = 2.0 * (fast.s[j + 1] - fast.s[j]) / (speed[j] + speed[j + 1])
            torques = reference_step_torques(fast.q[j], speed[j] * direction, fast.q[j + 1], speed[j + 1] * direction,
                                             dt)
            worst = max(worst, float(np.max(np.abs(torques) / EFFORT)))
        assert worst > 1.0, k


def test_interior_waypoints_are_stops(arm, limits):
    middle = np.array([0.9, -0.3])
    plan = plan_min_time(arm[1], WaypointPath([START, middle, GOAL]), limits, grid_points=40)
    at_middle = np.flatnonzero(np.all(plan.q == middle, axis=1))
    assert at_middle.size == 1
    assert np.max(np.abs(plan.qd[at_middle[0]])) < 1e-12
    assert np.max(np.abs(replay(arm[1], plan) - plan.q)) <= 1e-9
    assert np.all(plan.torque_utilisation >= 1.0 - 1e-6)


def test_velocity_limit_gives_a_cruise_at_the_limit(arm):
    model, discrete = arm
    limits = JointLimits.create(model.joint_names, EFFORT, velocity=[0.6, 10.0])
    plan = plan_min_time(discrete, WaypointPath([START, GOAL]), limits, grid_points=60)
    assert np.all(np.abs(plan.qd[:, 0]) <= 0.6 * (1.0 + 1e-9))
    cruising = np.abs(plan.qd[:, 0]) >= 0.6 * (1.0 - 1e-9)
    assert np.count_nonzero(cruising) > 10
    step_cruises = cruising[:-1] & cruising[1:]
    assert np.all((plan.torque_utilisation >= 1.0 - 1e-6) | step_cruises)
    # cruising at 0.6 rad/s over most of the 1.57 rad joint-1 motion takes at least 1.57/0.6 s
    assert plan.duration > 1.57 / 0.6


def test_six_joint_arm_plan_balances_energy_and_replays(tmp_path):
    model = load_model(CONFIG / "arm_6dof.yaml")
    system = RigidBodySystem(model)
    discrete = DiscreteDynamicModel(system)
    limits = JointLimits.from_model(model)
    start = model.initial_positions
    goal = start + np.array([0.8, -0.5, 0.6, 0.4, -0.6, 1.0])
    plan = plan_min_time(discrete, WaypointPath([start, goal]), limits, grid_points=24)
    energy = np.array([system.kinetic_energy(q, qd) + system.potential(q) for q, qd in zip(plan.q, plan.qd,
                                                                                          strict=True)])
    work = np.sum(plan.torques * np.diff(plan.q, axis=0), axis=1)
    np.testing.assert_allclose(work, np.diff(energy), rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(energy))))
    assert np.all(plan.torque_utilisation <= 1.0 + 1e-9)
    assert np.all(plan.velocity_utilisation <= 1.0 + 1e-9)
    at_velocity_limit = plan.velocity_utilisation >= 1.0 - 1e-9
    assert np.all((plan.torque_utilisation >= 1.0 - 1e-6) | (at_velocity_limit[:-1] & at_velocity_limit[1:]))
    assert np.max(np.abs(replay(discrete, plan) - plan.q)) <= 1e-9


def test_smooth_path_passes_the_waypoints_without_stopping(arm, limits):
    middle = np.array([0.9, -0.3])
    smooth = plan_min_time(arm[1], WaypointPath([START, middle, GOAL], smooth=True), limits, grid_points=17)
    stops = plan_min_time(arm[1], WaypointPath([START, middle, GOAL]), limits, grid_points=24)
    assert smooth.method == "nlp"
    assert np.all(smooth.torque_utilisation <= 1.0 + 1e-6)
    # each step reproduces its node from the planned state to round-off; open loop, the unstable arm
    # (upright at the goal) amplifies the Newton tolerance over the long first steps (1.2 s) to ~1e-9
    for k in range(smooth.steps):
        step = arm[1].step(smooth.q[k], smooth.qd[k], smooth.torques[k], smooth.dt[k])
        assert np.max(np.abs(step.q - smooth.q[k + 1])) <= 1e-11
    assert np.max(np.abs(replay(arm[1], smooth) - smooth.q)) <= 1e-8
    np.testing.assert_array_equal(smooth.q[-1], GOAL)
    assert np.max(np.abs(smooth.qd[-1])) < 1e-6
    passing = np.argmin(np.linalg.norm(smooth.q - middle, axis=1))
    assert np.linalg.norm(smooth.q[passing] - middle) < 0.05
    assert np.linalg.norm(smooth.qd[passing]) > 0.5
    assert smooth.duration < stops.duration


def test_infeasible_requests_are_refused_with_a_reason(arm, limits):
    discrete = arm[1]
    with pytest.raises(InfeasibleError, match="joint2.*outside its limits"):
        plan_min_time(discrete, WaypointPath([START, [0.5, 3.5]]), limits)
    weak = JointLimits.create(limits.joint_names, [15.0, 10.0])
    with pytest.raises(InfeasibleError, match="joint1.*hold the arm against gravity"):
        plan_min_time(discrete, WaypointPath([START, GOAL]), weak)
    with pytest.raises(InputError, match="NaN"):
        WaypointPath([START, [np.nan, 0.0]])
    with pytest.raises(InputError, match="coincide"):
        WaypointPath([START, START])
    with pytest.raises(InputError, match="3 joints"):
        plan_min_time(discrete, WaypointPath([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), limits)
    with pytest.raises(InputError, match="max_effort"):
        JointLimits.create(limits.joint_names, [20.0, np.inf])
    with pytest.raises(InputError, match="expected 2 values"):
        JointLimits.create(limits.joint_names, [20.0])
