"""DMOC (discrete_robot.planning.dmoc, .dmoc_sparse) and its Runge–Kutta comparison (.collocation).

Independent checks: the continuous equations of motion integrated to 1e-12 (the discrete optimal controls
must drive the real system to the target up to the discretisation error, shrinking at second order), the
variational integrators and the simulator's discrete model run forward on the optimal forces, finite differences
of the simulator's own equations for the sparse Jacobian, the order of convergence of the effort, and the Heun
transcription of the same problem (both approximate one continuous optimum).
"""

from pathlib import Path

import numpy as np
import pytest

from discrete_robot import budget
from discrete_robot.budget import BudgetExceededError
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.collocation import arm_point_to_point_rk, pendulum_swing_up_rk
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.dmoc import INVERTED, pendulum_swing_up_dmoc, time_grid
from discrete_robot.planning.dmoc_sparse import DmocProblem, accurate_model, min_effort
from discrete_robot.variational.spherical_pendulum import SphericalPendulumParams, simulate_vi

CONFIG = Path(__file__).resolve().parents[2] / "config"
START, GOAL = np.array([0.0, 0.0]), np.array([np.pi / 2, np.pi / 4])


@pytest.fixture(scope="module")
def swing_up():
    return pendulum_swing_up_dmoc(duration=1.0, h=0.033)


def test_article_grid_is_thirty_steps_of_a_thirtieth_of_a_second():
    assert time_grid(1.0, 0.033) == (30, pytest.approx(1.0 / 30.0))
    with pytest.raises(InputError):
        time_grid(0.0, 0.033)


def test_dmoc_swings_the_spherical_pendulum_up_to_the_inverted_state(swing_up):
    assert swing_up.outcome.success, swing_up.outcome.message
    assert np.max(np.abs(swing_up.q[-1] - INVERTED)) <= 1e-6
    assert np.max(np.abs(swing_up.velocity[-1])) <= 1e-6
    assert swing_up.terminal_error <= 1e-6
    # the package's forward simulation of the LGVI under the optimal node moments lands there too
    trajectory = simulate_vi(SphericalPendulumParams(), swing_up.q[0], np.zeros(3), swing_up.h, 30,
                             controls=swing_up.controls)
    assert np.max(np.abs(trajectory.q[-1] - INVERTED)) <= 1e-6
    assert swing_up.unit_length_error < 1e-14
    # a moment along the pendulum does nothing and costs effort: the optimum has none
    along = np.abs(np.sum(swing_up.controls * swing_up.q, axis=1))
    assert np.max(along) < 1e-4 * np.max(np.linalg.norm(swing_up.controls, axis=1))


def test_dmoc_controls_drive_the_continuous_pendulum_to_the_target_at_second_order(swing_up):
    finer = pendulum_swing_up_dmoc(duration=1.0, h=0.033 / 2)
    assert finer.terminal_error <= 1e-6
    ratio = swing_up.continuous_terminal_error / finer.continuous_terminal_error
    assert 3.0 < ratio < 5.5, (swing_up.continuous_terminal_error, finer.continuous_terminal_error)
    assert swing_up.continuous_terminal_error < 0.05
    # the article's J = Σ_{k=0}^{N} h/2 |u_k|² weights both end nodes fully: first order in h
    assert abs(swing_up.effort - finer.effort) / finer.effort < 0.03


def test_heun_version_converges_but_misses_by_its_unit_length_drift(swing_up):
    """What the article's comparison looks like here: SQP converges on Heun's method too, but Heun's
    states leave the sphere, so meeting q_x = q_y = 0, ω_x = ω_y = 0 leaves q_z short of −1 by that drift."""
    rk = pendulum_swing_up_rk(duration=1.0, h=0.033)
    assert rk.outcome.success, rk.outcome.message
    assert rk.outcome.constraint_violation < 1e-9
    assert rk.unit_length_error > 1e-4
    assert rk.terminal_error == pytest.approx(abs(np.linalg.norm(rk.q[-1]) - 1.0), rel=1e-3)
    assert rk.terminal_error > 1e4 * swing_up.terminal_error
    assert abs(rk.effort - swing_up.effort) / swing_up.effort < 0.01


@pytest.fixture(scope="module")
def planar_arm():
    return RigidBodySystem(load_model(CONFIG / "planar_2link.yaml"))


@pytest.fixture(scope="module")
def planar_limits():
    return JointLimits.from_model(load_model(CONFIG / "planar_2link.yaml"))


def test_transcription_jacobian_equals_finite_differences_of_the_simulators_equations():
    """The sparse Jacobian (compiled kernel and pattern) against central differences of the constraints, whose
    dynamics rows are the simulator's own left-hand sides (newton.left_hand_sides): 6-joint arm, random states,
    one joint moving less than the quadrature threshold in one step and less than LONG_EDGE in another."""
    model = load_model(CONFIG / "arm_6dof.yaml")
    limits = JointLimits.from_model(model)
    problem = DmocProblem(DiscreteDynamicModel(RigidBodySystem(model)), model.initial_positions,
                          model.initial_positions + 0.5, 0.3, 0.05, limits.effort)
    rng = np.random.default_rng(3)
    q, qd, _ = problem.layout.split(problem.guess("line"))
    q = q + 0.05 * rng.normal(size=q.shape)
    qd = qd + rng.normal(size=qd.shape)
    q[2, 3] = q[1, 3] + 3e-6
    q[4, 1] = q[3, 1] + 4e-4
    x = problem.layout.join(q, qd, rng.uniform(-1.0, 1.0, size=(problem.steps, problem.n)))
    rows, columns = problem.layout.pattern()
    analytic = np.zeros((problem.layout.rows, problem.layout.size))
    np.add.at(analytic, (rows, columns), problem.jacobian_values(x))
    numeric = np.empty_like(analytic)
    delta = 1e-6
    for c in range(x.size):
        shift = np.zeros(x.size)
        shift[c] = delta
        numeric[:, c] = (problem.constraints(x + shift) - problem.constraints(x - shift)) / (2.0 * delta)
    assert np.max(np.abs(analytic - numeric)) < 1e-6 * np.max(np.abs(analytic))
    assert not np.any(numeric[analytic == 0.0]), "a nonzero outside the pattern"


@pytest.fixture(scope="module")
def planar_solutions(planar_arm, planar_limits):
    discrete = DiscreteDynamicModel(planar_arm)
    return [min_effort(discrete, START, GOAL, 1.5, h, planar_limits) for h in (0.1, 0.05, 0.025)]


def test_sparse_dmoc_reaches_the_goal_at_rest_on_the_simulators_model(planar_solutions, planar_limits):
    for solution in planar_solutions:
        assert solution.outcome.success, solution.outcome.message
        assert solution.outcome.constraint_violation <= 1e-8
        # terminal_error is the simulator's forward run (DiscreteDynamicModel.simulate) under the optimal forces
        assert solution.terminal_error <= 1e-8
        assert np.all(np.abs(solution.controls) <= planar_limits.effort * (1.0 + 1e-9))
        np.testing.assert_allclose(solution.q[0], START)
    # the same forces through a second formulation: Newton steps one at a time from the optimised states
    solution = planar_solutions[1]
    discrete = DiscreteDynamicModel(RigidBodySystem(load_model(CONFIG / "planar_2link.yaml")))
    for k in range(solution.controls.shape[0]):
        step = discrete.step(solution.q[k], solution.velocity[k], solution.controls[k], solution.h)
        assert np.max(np.abs(step.qd - solution.velocity[k + 1])) < 1e-9


def test_sparse_dmoc_effort_converges_at_second_order_in_h(planar_solutions):
    """The discrete objective approximates ∫ ½|u|² dt of one continuous optimum: halving h divides its change
    by four (second-order discrete model, midpoint quadrature)."""
    efforts = [solution.effort for solution in planar_solutions]
    ratio = (efforts[0] - efforts[1]) / (efforts[1] - efforts[2])
    assert 3.5 < ratio < 4.5, efforts


def test_min_time_guess_finds_the_same_optimum(planar_arm, planar_limits):
    """From the minimum-time plan (3.32 s along the line) slowed to 4 s, and from the line: one optimum."""
    discrete = DiscreteDynamicModel(planar_arm)
    found = [min_effort(discrete, START, GOAL, 4.0, 0.1, planar_limits, guess=guess, continuous=False)
             for guess in ("min_time", "line")]
    for solution in found:
        assert solution.outcome.success, solution.outcome.message
    assert found[0].effort == pytest.approx(found[1].effort, rel=1e-6)
    with pytest.raises(InputError, match="fastest motion along the line takes 3.3"):
        min_effort(discrete, START, GOAL, 1.5, 0.05, planar_limits, guess="min_time")


def test_bad_point_to_point_requests_are_refused(planar_arm, planar_limits):
    discrete = DiscreteDynamicModel(planar_arm)
    with pytest.raises(InputError, match="start and goal"):
        min_effort(discrete, [0.0], GOAL, 1.0, 0.05, planar_limits)
    with pytest.raises(InputError, match="torque limits"):
        DmocProblem(discrete, START, GOAL, 1.0, 0.05, [20.0, -1.0])
    with pytest.raises(InputError, match="duration"):
        arm_point_to_point_rk(planar_arm, START, GOAL, -1.0, 0.05)
    with pytest.raises(InputError, match="start guess"):
        min_effort(discrete, START, GOAL, 1.0, 0.05, planar_limits, guess="spline")


def test_a_spent_budget_ends_the_solve_with_its_error(planar_arm, planar_limits, capfd):
    """budget.check() runs at every evaluation: a budget already spent stops IPOPT at its first iteration, and the
    error is the budget's (what the planner node answers), with nothing printed by the solver."""
    with budget.limited(0.0), pytest.raises(BudgetExceededError, match="request_timeout"):
        min_effort(DiscreteDynamicModel(planar_arm), START, GOAL, 1.5, 0.05, planar_limits, continuous=False)
    captured = capfd.readouterr()
    assert "Traceback" not in captured.out + captured.err


def test_an_interior_waypoint_is_passed_without_stopping(planar_arm, planar_limits):
    """Start → via → goal in 2 s: the simulator's run under the optimal forces passes the via point at the node
    allotted to it (in proportion to the largest joint travel: π/4 of π/2 → node 10 of 20) and ends at rest."""
    via = np.array([np.pi / 4, 0.0])
    solution = min_effort(DiscreteDynamicModel(planar_arm), START, GOAL, 2.0, 0.1, planar_limits,
                          continuous=False, via=[via])
    assert solution.outcome.success, solution.outcome.message
    assert np.max(np.abs(solution.q[10] - via)) < 1e-8
    assert np.max(np.abs(solution.velocity[10])) > 0.1      # passed, not stopped at
    assert solution.terminal_error < 1e-8
    with pytest.raises(InputError, match="more than 3 steps"):
        min_effort(DiscreteDynamicModel(planar_arm), START, GOAL, 0.3, 0.1, planar_limits, via=[via, via + 0.1])


def test_the_planning_model_has_the_simulators_equations_without_the_divided_differences_cancellation():
    """A step of the 6-joint arm in which the wrist moves 5.6e-5 rad (a turning point, as at step 3 of the h = 0.05
    optimum): the simulator's divided difference and the planning model's edge integral give the same left-hand
    side to within the former's round-off bound ε(|V| + |q̇0|ᵀ|a||q̇1|)/|Δq| (the simulator kernel's estimate); one-ulp
    changes of q(k+1) move the former by a good part of that and the latter by round-off of the forces only, as they
    do the simulator's equations with the differences of turned subtrees (the compositions' kernel)."""
    model = load_model(CONFIG / "arm_6dof.yaml")
    system = RigidBodySystem(model)
    simulator = DiscreteDynamicModel(system)
    planning = accurate_model(simulator)
    assert planning.small_step == 1e-3 and accurate_model(planning) is planning
    rng = np.random.default_rng(5)
    dt = 0.05
    q0, qd0 = model.initial_positions + 0.3 * rng.normal(size=6), rng.normal(size=6)
    dq = np.array([-1.1e-2, 0.16, -0.10, 0.16, 5.6e-5, -0.16])
    qd1 = 2.0 * dq / dt - qd0
    q1 = q0 + 0.5 * dt * (qd0 + qd1)
    a, V = system.mass_matrix(q1), system.potential(q1)
    bound = np.finfo(float).eps * (abs(V) + np.abs(qd0) @ np.abs(a) @ np.abs(qd1)) / abs(dq[4])

    def forces(discrete, q_next):
        return discrete.generalized_forces_batch(q0[None], qd0[None], q_next[None], qd1[None], np.array([dt]))[0]

    reference = forces(planning, q1)
    assert abs(forces(simulator, q1)[4] - reference[4]) < bound
    np.testing.assert_allclose(forces(simulator, q1)[[0, 1, 2, 3, 5]], reference[[0, 1, 2, 3, 5]], rtol=0,
                               atol=1e-12)
    nearby = [q1 * (1.0 + np.finfo(float).eps * rng.choice([-1.0, 0.0, 1.0], size=6)) for _ in range(40)]

    def spread(discrete):
        return max(abs(forces(discrete, q_next)[4] - forces(discrete, q1)[4]) for q_next in nearby)

    # measured: 1.1e-11, 5.6e-17 and 2.2e-16 N m against a bound of 2.6e-10 N m
    assert spread(simulator) > 0.01 * bound
    assert spread(planning) < 1e-5 * bound
    turned = DiscreteDynamicModel(system, turned_differences=True)
    assert abs(forces(turned, q1)[4] - reference[4]) < bound
    assert spread(turned) < 1e-5 * bound


def test_sparse_dmoc_reaches_the_goal_at_rest_on_the_6_joint_arm():
    """Issue 24's case: the 6-joint arm by +0.5 rad on every joint in 1.5 s at h = 0.05 (its wrist turns round
    within a step: on the simulator's divided-difference quotient the replay ended 7.8e-7 from the goal)."""
    model = load_model(CONFIG / "arm_6dof.yaml")
    start = model.initial_positions
    solution = min_effort(DiscreteDynamicModel(RigidBodySystem(model)), start, start + 0.5, 1.5, 0.05,
                          JointLimits.from_model(model), continuous=False)
    assert solution.outcome.success, solution.outcome.message
    assert solution.outcome.constraint_violation <= 1e-8
    assert solution.terminal_error <= 1e-8


@pytest.mark.slow
def test_sparse_dmoc_moves_the_ur5_from_its_urdf():
    """The UR5 of example-robot-data (URDF read by load_model): from (0, −1, 1, 0, 0, 0) by +0.5 rad on every joint
    in 1.5 s within its URDF's effort and velocity limits; the simulator's run under the optimal forces ends at
    the goal at rest."""
    from discrete_robot.model.example_robots import example_robot_path

    model = load_model(example_robot_path("ur5"))
    start = np.array([0.0, -1.0, 1.0, 0.0, 0.0, 0.0])
    solution = min_effort(DiscreteDynamicModel(RigidBodySystem(model)), start, start + 0.5, 1.5, 0.1,
                          JointLimits.from_model(model), continuous=False)
    assert solution.outcome.success, solution.outcome.message
    assert solution.outcome.constraint_violation <= 1e-8
    assert solution.terminal_error <= 1e-8
    assert np.all(np.abs(solution.controls) <= model.effort_limits * (1.0 + 1e-9))
