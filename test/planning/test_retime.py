"""Retiming a stack's path (planning.retime) and every plan's predicted execution (planning.prediction)."""

import json

import numpy as np
import pytest

from discrete_robot.cli import main
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.planning.continuous_topp import time_optimal_segment
from discrete_robot.planning.path import BlendedPath, SplinePath
from discrete_robot.planning.planner import PlannerSettings, TrajectoryPlanner
from discrete_robot.planning.retime import retime

START, GOAL = np.zeros(2), np.array([np.pi / 2, np.pi / 4])


@pytest.fixture(scope="module")
def planar():
    return load_model(package_config_path("planar_2link.yaml"))


def _curved_points(count: int, dof: int, amplitude: float = 0.8) -> np.ndarray:
    """A smooth joint path sampled at ``count`` points, as a sampling planner returns one."""
    u = np.linspace(0.0, 1.0, count)[:, None]
    rates = np.array([1.0, 1.5, 0.7, 2.0, 1.2, 0.5])[:dof]
    return amplitude * np.sin(np.pi * u * rates + np.linspace(0.1, 0.9, dof))


def test_spline_path_passes_every_point_and_is_c2_with_not_a_knot_ends():
    points = _curved_points(12, 3)
    path = SplinePath(points)
    q, _, _ = path.derivatives(path.breakpoints)
    assert np.max(np.abs(q - points)) <= 1e-12
    eps = 1e-7
    for knot in path.breakpoints[1:-1]:
        below, above = (np.array(path.derivatives(knot + d)) for d in (-eps, eps))
        np.testing.assert_allclose(below, above, atol=1e-5)          # q, q', q'' continuous
    # not-a-knot: the third derivative q''' is continuous at the second and the second-to-last knots
    for knot in (1.0, path.breakpoints[-2]):
        jerk = [(path.derivatives(knot + d + eps)[2] - path.derivatives(knot + d)[2]) / eps for d in (-1e-3, 1e-3)]
        np.testing.assert_allclose(jerk[0], jerk[1], atol=1e-3)


def test_blended_path_has_unit_speed_and_stays_within_its_deviation_of_the_corners():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    path = BlendedPath(points, max_deviation=0.05)
    s = np.linspace(0.0, path.length, 2001)
    q, dq, ddq = path.derivatives(s)
    np.testing.assert_allclose(np.linalg.norm(dq, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(q[[0, -1]], points[[0, -1]], atol=1e-12)
    distance = np.min(np.linalg.norm(q - points[1], axis=1))
    assert distance == pytest.approx(0.05, rel=1e-3)     # the arc's midpoint is max_deviation from the corner
    curvature = np.linalg.norm(ddq, axis=1)
    assert np.all((curvature < 1e-12) | (np.abs(curvature - curvature.max()) < 1e-9))   # lines and one arc


def test_straight_path_takes_the_continuous_minimum_time(planar):
    """Two points: the not-a-knot spline is the straight segment; the duration converges to the continuous
    time optimum of continuous_topp (integrated max/min acceleration curves), an independent solution."""
    exact = time_optimal_segment(RigidBodySystem(planar), START, GOAL, planar.effort_limits).duration
    timed = retime(planar, planar.joint_names, [START, GOAL], grid_steps=800)
    assert timed.duration == pytest.approx(exact, rel=2e-3)
    assert timed.deviation <= 1e-9


def test_retimed_plan_keeps_the_limits_by_newton_euler_and_uses_them(planar):
    points = _curved_points(50, 2)
    timed = retime(planar, planar.joint_names, points, effort_scale=0.95, velocity_scale=0.8)
    system = RigidBodySystem(planar)
    torques = np.array([system.inverse_dynamics(q, qd, qdd) for q, qd, qdd in
                        zip(timed.positions[:-1], timed.velocities[:-1], timed.accelerations[:-1], strict=True)])
    np.testing.assert_allclose(torques, timed.efforts[:-1], atol=1e-9 * 20.0)
    utilisation = np.abs(torques) / (0.95 * planar.effort_limits)
    assert utilisation.max() <= 1.0 + 1e-9
    speed = np.abs(timed.velocities) / (0.8 * planar.velocity_limits)
    assert speed.max() <= 1.0 + 1e-9
    # time-optimal: some limit is active at almost every node
    active = np.maximum(utilisation.max(axis=1), speed[:-1].max(axis=1))
    assert np.median(active) > 0.99
    assert timed.deviation <= 1e-9
    assert np.all(np.diff(timed.t) > 0.0)


def test_joint_order_and_acceleration_limits(planar):
    points = _curved_points(20, 2)
    ordered = retime(planar, ["joint1", "joint2"], points)
    swapped = retime(planar, ["joint2", "joint1"], points[:, ::-1])
    np.testing.assert_allclose(swapped.t, ordered.t, rtol=1e-12)
    limited = retime(planar, ["joint1", "joint2"], points, acceleration_limits=[2.0, 2.0])
    assert limited.duration > ordered.duration
    assert np.max(np.abs(limited.accelerations)) <= 2.0 * (1.0 + 1e-6)
    with pytest.raises(InputError, match="joint_names"):
        retime(planar, ["joint1", "joint1"], points)
    with pytest.raises(InputError, match="effort_scale"):
        retime(planar, ["joint1", "joint2"], points, effort_scale=1.5)


def test_at_full_effort_the_prediction_says_the_ur5_will_lag_and_by_how_much():
    planner = TrajectoryPlanner(load_model(example_robot_path("ur5")))
    plan = planner.retime(_curved_points(50, 6), effort_scale=1.0)
    predicted = plan.predicted
    assert predicted.peak_effort_fraction.max() == pytest.approx(1.0)
    assert predicted.end_lag > 0.1
    assert f"reached {predicted.end_lag:.3f} s after the last point" in plan.details["predicted"]
    assert predicted.max_tracking_error.max() > 0.01      # more than the goal tolerance while it runs


def test_min_effort_converged_long_solve_is_not_refused(planar):
    """Issue 41 point 6a: 5 s at 25 ms, Solve_Succeeded, used to be refused by an absolute 1e-6 goal tolerance."""
    plan = TrajectoryPlanner(planar, PlannerSettings(predict=False)).plan(
        [START, GOAL], method="min_effort", duration=5.0, time_step_hint=0.025)
    assert plan.duration == pytest.approx(5.0)
    assert plan.details["solver"] == "Solve_Succeeded"


def test_smoothing_formula_check_allows_round_off_of_cancelling_velocities(planar):
    """A long step whose velocities nearly cancel (a planner's from the smoothing formula itself): the sum's
    round-off, eps·Δt·|q̇|, is accepted; a real mismatch is not."""
    discrete = DiscreteDynamicModel(RigidBodySystem(planar))
    q0, qd0, dt = np.array([0.1, 0.2]), np.array([7.3, -5.1]), np.array([1e7])
    chord = np.array([1e-3, 2e-3])
    qd1 = 2.0 * chord / dt[0] - qd0
    q1 = q0 + chord
    assert np.all(np.isfinite(discrete.generalized_forces_batch(q0[None], qd0[None], q1[None], qd1[None], dt)))
    with pytest.raises(InputError, match="smoothing formula"):
        discrete.generalized_forces_batch(q0[None], qd0[None], (q1 + 1e-6)[None], qd1[None], dt)


def test_plan_retime_cli_gives_the_trajectory_and_the_prediction(tmp_path, capsys):
    points = _curved_points(10, 2, 0.5) + np.array([1.2, 0.0])   # near upright: held within 80 % of the limits
    path = tmp_path / "path.json"
    path.write_text(json.dumps({"joint_names": ["joint2", "joint1"], "positions": points[:, ::-1].tolist()}))
    assert main(["plan", "retime", "--trajectory", str(path), "--effort-scale", "0.8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["trajectory"]["joint_names"] == ["joint1", "joint2"]
    assert len(result["trajectory"]["t"]) == len(result["trajectory"]["efforts"])
    assert result["duration"] == pytest.approx(result["trajectory"]["t"][-1])
    assert set(result["predicted"]["max_tracking_error"]) == {"joint1", "joint2"}
    assert isinstance(result["predicted"]["meets_tolerances"], bool)
    assert main(["plan", "retime", "--trajectory", str(path)]) == 0
    assert "predicted execution" in capsys.readouterr().out
    path.write_text("{]")
    assert main(["plan", "retime", "--trajectory", str(path)]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_every_plan_carries_its_prediction_and_a_slow_plan_is_tracked_closely(planar):
    """With ``predict``, the min_time plan carries its prediction; a retime at a wide margin is tracked far more
    closely than at full effort (the feedforward is the model's own, the error comes from the saturated, stiffer
    motion); the automatic margin states its reason."""
    planner = TrajectoryPlanner(planar, PlannerSettings(predict=True))
    plan = planner.plan([START, GOAL])
    assert plan.predicted is not None and "predicted execution" in plan.details["predicted"]
    assert plan.predicted.peak_effort_fraction.max() > 0.99          # bang-bang plan at its limits
    points = _curved_points(10, 2, 0.5) + np.array([1.2, 0.0])
    fast = planner.retime(points, effort_scale=1.0)
    slow = planner.retime(points, effort_scale=0.5, velocity_scale=0.3)
    assert slow.duration > fast.duration
    assert slow.predicted.max_tracking_error.max() < 0.2 * fast.predicted.max_tracking_error.max()
    assert slow.predicted.end_lag < fast.predicted.end_lag
    chosen = planner.retime(points)
    assert "chosen as the largest" in chosen.details["effort_scale"]
    assert chosen.predicted.meets_tolerances
