"""The predicted execution warns before a plan runs: a plan at the full effort limits leaves the controller no
torque to correct its errors, so its execution lags past MoveIt's monitoring, and the prediction says by how much."""

import math

import numpy as np
import pytest

from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.planning.planner import TrajectoryPlanner
from discrete_robot.planning.prediction import MOVEIT_DURATION_MARGIN, MOVEIT_DURATION_SCALING


def _path() -> np.ndarray:
    """7 points of the 2-link arm's path about upright (joint1 = π/2), rad (joint1, joint2)."""
    s = np.linspace(0.0, 1.0, 7)
    return np.column_stack([math.pi / 2 + 0.6 * s, 0.3 * np.sin(math.pi * s / 2)])


def test_full_effort_plan_is_predicted_to_lag_and_a_margin_is_not():
    planner = TrajectoryPlanner(load_model(package_config_path("planar_2link.yaml")))
    full = planner.retime(_path(), ["joint1", "joint2"], 1.0)
    margin = planner.retime(_path(), ["joint1", "joint2"], 0.8)
    predicted = full.predicted
    # the plan saturates a joint: the feedforward alone uses its whole limit
    assert predicted.peak_effort_fraction.max() >= 1.0 - 1e-9
    allowed = (MOVEIT_DURATION_SCALING - 1.0) * full.duration + MOVEIT_DURATION_MARGIN
    assert predicted.allowed_lag == allowed
    assert math.isfinite(predicted.end_lag) and predicted.end_lag > allowed
    assert not predicted.meets_tolerances
    assert "LAG" in predicted.message() and f"{predicted.end_lag:.3f} s" in predicted.message()
    # with torque in reserve the controller keeps up
    assert margin.predicted.peak_effort_fraction.max() < 1.0
    assert margin.predicted.end_lag < predicted.end_lag and margin.predicted.meets_tolerances


def _plan_on_a_line():
    """A rest-to-rest quintic of 2 joints over 1 s (one segment, JTC's quintic): knots t, q, q̇, q̈."""
    t = np.array([0.0, 1.0])
    q = np.array([[0.0, 0.0], [1.0, -0.5]])
    zeros = np.zeros_like(q)
    return t, q, zeros, zeros


def _quintic(t, q0, q1):
    """The rest-to-rest quintic from q0 to q1 over 1 s at times t (s): 10 s³ − 15 s⁴ + 6 s⁵, and its rate."""
    s = np.clip(t, 0.0, 1.0)[:, None]
    shape, rate = 10 * s**3 - 15 * s**4 + 6 * s**5, 30 * s**2 - 60 * s**3 + 30 * s**4
    return q0 + shape * (q1 - q0), rate * (q1 - q0)


def test_a_measured_execution_off_by_a_constant_and_settling_exponentially():
    """Joint states sampled at 100 Hz: on the plan's quintic plus 3 mrad on joint 1 until the last point, then
    approaching the goal as a e^(−s/τ) (a = 3 mrad, τ = 0.1 s). The largest error is 3 mrad on joint 1 and 0 on
    joint 0; the goal (0.01 rad, at rest within 0.01 rad/s) is met once a/τ e^(−s/τ) ≤ 0.01, s ≥ τ ln(a/(0.01 τ))
    = 0.1099 s: the first sample from there, 0.11 s after the last point."""
    from discrete_robot.planning.prediction import measure_execution

    t, q, qd, qdd = _plan_on_a_line()
    a, tau = 3e-3, 0.1
    samples = np.arange(0, 200) * 0.01
    positions, velocities = _quintic(samples, q[0], q[1])
    after = samples >= 1.0
    offset = np.where(after, a * np.exp(-(samples - 1.0) / tau), a)
    positions[:, 1] += offset
    velocities[:, 1] += np.where(after, -offset / tau, 0.0)
    measured = measure_execution(t, q, qd, qdd, samples, positions, velocities, np.full(2, 0.01))
    np.testing.assert_allclose(measured.max_tracking_error, [0.0, a], atol=1e-12)
    assert tau * math.log(a / (0.01 * tau)) == pytest.approx(0.1099, abs=1e-4)
    assert measured.end_lag == pytest.approx(0.11, abs=1e-12) and measured.samples == 112


def test_a_measured_execution_that_never_settles_has_no_lag():
    """Joint states that stay 0.02 rad off the goal after the last point (tolerance 0.01 rad): the lag is inf."""
    from discrete_robot.planning.prediction import measure_execution

    t, q, qd, qdd = _plan_on_a_line()
    samples = np.arange(0, 150) * 0.01
    positions, velocities = _quintic(samples, q[0], q[1])
    positions[:, 0] += 0.02
    measured = measure_execution(t, q, qd, qdd, samples, positions, velocities, np.full(2, 0.01))
    assert measured.end_lag == math.inf and measured.samples == samples.size
    np.testing.assert_allclose(measured.max_tracking_error, [0.02, 0.0], atol=1e-12)
