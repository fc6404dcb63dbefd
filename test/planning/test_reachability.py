"""The min-time planner's compiled reachability kernels against brute force over a dense grid of speeds.

A step's inertial torques are F_r(x, y) − g_r = α_r y² + γ_r x y + β_r x² with limits L_r < 0 < U_r; for
random coefficients the kernels' exact maxima must bound every feasible grid point and be feasible
themselves (to the grid's resolution).
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from discrete_robot.planning import reachability

CAP = 3.0
GRID = np.linspace(0.0, CAP, 3001)
coefficient = st.floats(-5.0, 5.0).filter(lambda c: abs(c) > 1e-3)
limit = st.floats(0.1, 5.0)


@st.composite
def steps(draw):
    n = draw(st.integers(1, 3))
    rows = [np.array(draw(st.lists(coefficient, min_size=n, max_size=n))) for _ in range(3)]
    lower = -np.array(draw(st.lists(limit, min_size=n, max_size=n)))
    upper = np.array(draw(st.lists(limit, min_size=n, max_size=n)))
    return (*rows, lower, upper)


def _violation(step, x, y):
    """max_r of how far α y² + γ x y + β x² lies outside [L, U] (broadcast over x, y)."""
    alpha, gamma, beta, lower, upper = (v[:, None, None] for v in step)
    inertial = alpha * y * y + gamma * x * y + beta * x * x
    return np.max(np.maximum(inertial - upper, lower - inertial), axis=0)


@settings(max_examples=200, deadline=None)
@given(steps(), st.floats(0.0, CAP))
def test_max_exit_speed_is_the_largest_feasible_speed_on_a_dense_grid(step, x):
    y = reachability.max_exit_speed(*step, x, CAP, np.zeros(step[0].size))
    feasible = GRID[(_violation(step, np.array([[x]]), GRID[None, :])[0] <= 0.0) & ((x > 0.0) | (GRID > 0.0))]
    if feasible.size:
        assert y >= feasible.max() - 1e-12
    if not np.isnan(y):
        assert 0.0 <= y <= CAP and (x > 0.0 or y > 0.0)
        assert _violation(step, np.array([[x]]), np.array([[y]]))[0, 0] <= 1e-9


@settings(max_examples=100, deadline=None)
@given(steps())
def test_max_entry_speed_is_the_largest_controllable_speed_on_a_dense_grid(step):
    x = reachability.max_entry_speed(*step, CAP)
    assume(np.isfinite(x) and x < 50.0)
    xs = np.linspace(0.0, 1.5 * x + 1.0, 1501)
    violation = _violation(step, xs[:, None], GRID[None, :])     # (x, y)
    controllable = xs[np.any(violation <= 0.0, axis=1)]
    assert x >= controllable.max() - 1e-12
    # x itself has an admissible exit speed, to the y grid's resolution (dF/dy ≤ 2|α|y + |γ|x)
    spacing = GRID[1] - GRID[0]
    slope = np.max(2.0 * np.abs(step[0]) * CAP + np.abs(step[1]) * x)
    assert np.min(_violation(step, np.array([[x]]), GRID[None, :])) <= slope * spacing + 1e-9


def test_passes_stop_at_rest_within_the_controllable_speeds():
    """Three steps with F = y² − x² and |F| ≤ 1 (α = 1, β = −1, γ = 0): a step changes v² by at most 1, so
    braking to rest K = (0, √2, 1, 0) (K_0 = 0: the start is at rest), and the greedy profile reaches
    v² = 1 in one step, holds it, and brakes in the last: v = (0, 1, 1, 0)."""
    ones = np.ones((3, 1))
    K = reachability.backward_pass(ones, 0.0 * ones, -ones, -ones, ones, np.full(4, np.inf), 0.0)
    np.testing.assert_allclose(K, [0.0, np.sqrt(2.0), 1.0, 0.0], atol=1e-12)
    v = np.empty(4)
    assert reachability.forward_pass(ones, 0.0 * ones, -ones, -ones, ones, K, np.zeros(1), v) == -1
    np.testing.assert_allclose(v, [0.0, 1.0, 1.0, 0.0], atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(steps(), st.floats(0.0, CAP), st.floats(0.5, 20.0))
def test_squared_entry_is_the_linear_programs_maximum(step, exit_cap, entry_cap):
    """Without the x y term the rows are linear in u = x², w = y²: the kernel's largest controllable u is the
    optimum of the same linear program solved by scipy's HiGHS (an independent solver), −1 when it has none."""
    from scipy.optimize import linprog

    alpha, _, beta, lower, upper = step
    w_cap, u_cap = exit_cap * exit_cap, entry_cap * entry_cap
    u = reachability.max_squared_entry(alpha, beta, lower, upper, w_cap, u_cap, np.zeros(alpha.size))
    rows = np.column_stack([beta, alpha])                   # (u, w)
    program = linprog([-1.0, 0.0], A_ub=np.vstack([rows, -rows]), b_ub=np.concatenate([upper, -lower]),
                      bounds=[(0.0, u_cap), (0.0, w_cap)], method="highs")
    if program.status == 2:
        assert u == -1.0
    else:
        assert u == pytest.approx(program.x[0], rel=1e-9, abs=1e-9)


def test_squared_passes_stop_at_rest_within_the_controllable_speeds():
    """The three steps of the test above, F = y² − x², |F| ≤ 1, through the passes for rows linear in the squared
    speeds: the same K = (0, √2, 1, 0) and v = (0, 1, 1, 0), worked out by hand there."""
    ones = np.ones((3, 1))
    K = reachability.squared_backward_pass(ones, -ones, -ones, ones, np.full(4, np.inf), 0.0)
    np.testing.assert_allclose(K, [0.0, np.sqrt(2.0), 1.0, 0.0], atol=1e-12)
    v = np.empty(4)
    assert reachability.squared_forward_pass(ones, -ones, -ones, ones, K, np.zeros(1), v) == -1
    np.testing.assert_allclose(v, [0.0, 1.0, 1.0, 0.0], atol=1e-12)
