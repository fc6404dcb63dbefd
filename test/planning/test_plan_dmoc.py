"""DMOC (discrete_robot.planning.dmoc) and its Runge–Kutta comparison (discrete_robot.planning.collocation).

Independent checks: the continuous equations of motion integrated to 1e-12 (the discrete optimal controls
must drive the real system to the target up to the discretisation error, shrinking at second order), the
variational integrators run forward on the optimal forces, and the Heun transcription of the same problem
(both approximate one continuous optimum, so their efforts agree to the discretisation error).
"""

from pathlib import Path

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.collocation import arm_point_to_point_rk, pendulum_swing_up_rk
from discrete_robot.planning.dmoc import INVERTED, arm_point_to_point_dmoc, pendulum_swing_up_dmoc, time_grid
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator
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


def test_dmoc_arm_move_reaches_the_goal_on_the_variational_integrator(planar_arm):
    solution = arm_point_to_point_dmoc(planar_arm, START, GOAL, duration=1.5, h=0.05, effort=[20.0, 10.0])
    assert solution.outcome.success, solution.outcome.message
    assert solution.outcome.constraint_violation < 1e-9
    # forward simulation of the midpoint VI under the optimal forces, from rest at the start
    trajectory = MidpointVariationalIntegrator(planar_arm).simulate(START, np.zeros(2), solution.h, 30,
                                                                    forces=solution.controls)
    assert np.max(np.abs(trajectory.q[-1] - GOAL)) < 1e-8
    assert np.max(np.abs(trajectory.qd[-1])) < 1e-8
    assert np.all(np.abs(solution.controls) <= np.array([20.0, 10.0]) + 1e-9)
    rk = arm_point_to_point_rk(planar_arm, START, GOAL, duration=1.5, h=0.05, effort=[20.0, 10.0])
    assert rk.outcome.success, rk.outcome.message
    assert rk.terminal_error < 1e-8
    assert abs(rk.effort - solution.effort) / solution.effort < 0.03


def test_bad_point_to_point_requests_are_refused(planar_arm):
    with pytest.raises(InputError, match="start and goal"):
        arm_point_to_point_dmoc(planar_arm, [0.0], GOAL, 1.0, 0.05)
    with pytest.raises(InputError, match="torque limits"):
        arm_point_to_point_dmoc(planar_arm, START, GOAL, 1.0, 0.05, effort=[20.0, -1.0])
    with pytest.raises(InputError, match="duration"):
        arm_point_to_point_rk(planar_arm, START, GOAL, -1.0, 0.05)
