"""The predicted execution warns before a plan runs: a plan at the full effort limits leaves the controller no
torque to correct its errors, so its execution lags past MoveIt's monitoring, and the prediction says by how much."""

import math

import numpy as np

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
